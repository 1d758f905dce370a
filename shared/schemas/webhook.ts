import { z } from 'zod'
import { ORDER_EVENT_TYPES } from '../courier.js'
import { optionalText, requiredText } from './fields.js'

// The resources of docs/contracts.md section 7, as requests are checked and the OpenAPI
// document describes them; shared/webhooks/resource.ts builds the answers.

const eventType = z.enum(ORDER_EVENT_TYPES, { error: `each value in event_types must be one of the following values: ${ORDER_EVENT_TYPES.join(', ')}` })

/** Body of `POST /v2/business/webhook-endpoints`. */
export const endpointRequestSchema = z.object({
  url: requiredText('url', { max: 2048 }),
  // Omitted: every event type, including ones added later.
  // The length is checked on plain values first, so a huge array costs no validation per element.
  event_types: z
    .array(z.unknown(), { error: 'event_types must be an array' })
    .min(1, { error: 'event_types should not be empty' })
    .max(ORDER_EVENT_TYPES.length, { error: `event_types must contain no more than ${ORDER_EVENT_TYPES.length} elements` })
    .pipe(z.array(eventType).refine((types) => new Set(types).size === types.length, { error: "All event_types's elements must be unique" }))
    // The document shows what the pipe checks, which the input side alone (any array) does not say.
    .meta({ items: { type: 'string', enum: [...ORDER_EVENT_TYPES] }, uniqueItems: true })
    .optional(),
  description: optionalText('description'),
}, { error: 'body must be a JSON object' })

export type EndpointRequest = z.infer<typeof endpointRequestSchema>

const iso = z.string().describe('ISO 8601 UTC, to the millisecond')

export const endpointSchema = z.object({
  id: z.string().describe('we_…'),
  url: z.string(),
  event_types: z.array(z.enum(ORDER_EVENT_TYPES)).nullable().describe('null: every event type'),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z.string().nullable(),
  livemode: z.boolean(),
  created_at: iso,
})

export const createdEndpointSchema = endpointSchema.extend({
  secret: z.string().describe('whsec_…: shown only in this answer; verify deliveries with it (Standard Webhooks)'),
})

export const endpointListSchema = z.object({ data: z.array(endpointSchema) })

/** Body of `POST …/rotate-secret`; the body itself may be left out. */
export const rotateSecretRequestSchema = z.object({
  expire_previous_now: z.boolean({ error: 'expire_previous_now must be a boolean' }).optional().describe('true: the old secret stops signing at once (it leaked); false or left out: it signs alongside the new one for 24 hours'),
}, { error: 'body must be a JSON object' })

export const rotatedSecretSchema = z.object({
  id: z.string(),
  secret: z.string().describe('The new whsec_… secret, shown only here'),
  previous_secret_expires_at: iso.describe('Until then deliveries carry a signature with the old secret too'),
})

export const deliveryLogSchema = z.object({
  data: z.array(z.object({
    event_id: z.string(),
    event_type: z.enum(ORDER_EVENT_TYPES),
    attempt: z.number().int().positive(),
    status: z.enum(['succeeded', 'retrying', 'failed']),
    response_status: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: z.string().nullable(),
    next_attempt_at: iso.nullable(),
    at: iso,
  })),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
})

export const redeliverySchema = z.object({
  event_id: z.string(),
  endpoint_ids: z.array(z.string()).describe('The endpoints one more delivery was queued to'),
})
