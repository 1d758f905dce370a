import { z } from 'zod'

/** One entry of every error list in this API. */
export const errorItemSchema = z.object({
  index: z.number().int().optional(),
  field: z.string().optional(),
  message: z.string(),
})

/** The spec's error body; `errors`, `request_id` and a few outcome fields may follow. */
export const errorBodySchema = z.object({
  statusCode: z.number().int(),
  timestamp: z.string().describe('ISO 8601 UTC'),
  path: z.string().describe('request path without query string, e.g. /v2/business/order/cost'),
  message: z.string(),
  errors: z.array(errorItemSchema).optional(),
  request_id: z.string().optional(),
  placement_id: z.string().optional().describe('The placement the answer is about: on the refusals and 503s of the placement itself, once its body is valid (not on a validation 400, nor on a refusal or 503 before the body is read)'),
  required: z.number().optional().describe('Insufficient balance: what the placement costs'),
  available: z.number().optional().describe('Insufficient balance: what the wallet holds'),
  currency: z.string().optional(),
})
