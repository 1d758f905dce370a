import type { Dispatcher } from 'undici'
import { z } from 'zod'
import type { AttemptRecord, EndpointToDeliver, EventToDeliver } from '../../shared/db/webhooks.js'
import { toEventResource } from '../../shared/orders/resource.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { continuingTrace, inSpan } from '../../shared/telemetry/tracing.js'
import { retryDelayMs } from '../../shared/webhooks/queue.js'
import { signedHeaders } from '../../shared/webhooks/signing.js'
import { openSecrets } from '../../shared/webhooks/endpoints.js'
import type { SecretBox } from '../../shared/webhooks/secret-box.js'
import { checkWebhookUrl, type UrlRules } from '../../shared/webhooks/url-rules.js'
import type { DeliveryRows } from './delivery-rows.js'
import type { EndpointSlots, ReleaseSlot } from './endpoint-slots.js'
import { postSigned, type Answer, type SignedRequest } from './post.js'

export interface DeliverDeps {
  rows: DeliveryRows
  dispatcher: Dispatcher
  rules: UrlRules
  secrets: SecretBox
  slots: EndpointSlots
  timeoutMs: number
  retryScale: number
}

/** How one run of a delivery job ended: the job maps it to done, or to "run me again later". */
export const attemptOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('succeeded') }),
  z.object({ kind: z.literal('retrying'), delayMs: z.number().int().nonnegative(), reason: z.string() }),
  z.object({ kind: z.literal('failed'), reason: z.string() }),
  // Nothing to do: the delivery is at rest already, or its endpoint deleted.
  z.object({ kind: z.literal('skipped') }),
  // A crash left the job running before the delivery's next attempt is due.
  z.object({ kind: z.literal('early'), delayMs: z.number().int().nonnegative() }),
  // The endpoint has WEBHOOK_ENDPOINT_CONCURRENCY deliveries in flight: run again shortly, no attempt counted.
  z.object({ kind: z.literal('busy'), delayMs: z.number().int().nonnegative() }),
])
export type AttemptOutcome = z.infer<typeof attemptOutcomeSchema>

const EVENT_GONE = 'the event is no longer kept (EVENT_RETENTION_D); nothing was sent'

// How long a delivery waits in hand for a slot of its endpoint, then aside before it looks again.
const SLOT_WAIT_MS = 250
const BUSY_RETRY_MS = 1000

/** The signed request of an attempt, or why none is sent. */
type Outgoing = ({ kind: 'request' } & SignedRequest) | { kind: 'none'; error: string }

/**
 * One attempt of one delivery (docs/contracts.md section 7): reads the delivery with its event
 * and endpoint, checks the URL again, signs the event, POSTs it, and records the attempt. 2xx
 * succeeds; 410 disables the endpoint; anything else is retried on the schedule until the last
 * attempt, after which the delivery has failed. While its endpoint already has
 * WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight, none is made: `busy`.
 */
export async function deliver(deps: DeliverDeps, deliveryId: number): Promise<AttemptOutcome> {
  const found = await deps.rows.find(deliveryId)
  if (!found) return { kind: 'skipped' }
  const { delivery, event, endpoint } = found
  if (delivery.status === 'succeeded' || delivery.status === 'failed') return { kind: 'skipped' }
  const waitMs = delivery.nextAttemptAt.getTime() - Date.now()
  if (delivery.attempts > 0 && waitMs > 1000) return { kind: 'early', delayMs: waitMs }
  // A deleted endpoint's deliveries go with it (the purge sweep); an event gone past retention fails its delivery.
  if (!endpoint) return { kind: 'skipped' }
  if (!event) {
    await deps.rows.failWithoutEvent(deliveryId, EVENT_GONE)
    return { kind: 'failed', reason: EVENT_GONE }
  }

  // Ready before the slot is taken, so the slot is held for the POST alone.
  const outgoing = await prepare(deps, event, endpoint)
  const slot = outgoing.kind === 'request' ? await deps.slots.acquire(endpoint.id, SLOT_WAIT_MS) : null
  if (outgoing.kind === 'request' && !slot) return { kind: 'busy', delayMs: BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS) }
  return attemptDelivery(deps, deliveryId, delivery.attempts + 1, event, endpoint, outgoing, slot)
}

/** The URL rules again (DNS can change), then the body and its Standard Webhooks headers. */
async function prepare(deps: DeliverDeps, event: EventToDeliver, endpoint: EndpointToDeliver): Promise<Outgoing> {
  if (endpoint.status === 'disabled') return { kind: 'none', error: `endpoint is disabled: ${endpoint.disabledReason ?? 'by the business'}` }
  const verdict = await checkWebhookUrl(endpoint.url, deps.rules)
  if (!verdict.ok) return { kind: 'none', error: verdict.message }
  const body = JSON.stringify(toEventResource(event))
  return { kind: 'request', url: verdict.url, body, headers: signedHeaders(openSecrets(endpoint, deps.secrets), event.id, body, new Date()) }
}

/**
 * The attempt itself: the POST (when there is one to make), then the record of it. The
 * endpoint's slot is held for the POST only: what limits a slow receiver is requests in flight
 * to it, not our own write of the outcome.
 */
async function attemptDelivery(deps: DeliverDeps, deliveryId: number, attempt: number, event: EventToDeliver, endpoint: EndpointToDeliver, outgoing: Outgoing, slot: ReleaseSlot | null): Promise<AttemptOutcome> {
  const attributes = { 'courier.event_id': event.id, 'courier.endpoint_id': endpoint.id, 'courier.attempt': attempt }
  // The span continues the trace of the transaction that wrote the event.
  return continuingTrace(event.traceparent, () => inSpan('webhook.deliver', attributes, async (span) => {
    const started = performance.now()
    let answer: Answer
    try {
      answer = outgoing.kind === 'request' ? await postSigned(deps.dispatcher, outgoing, deps.timeoutMs) : { status: null, error: outgoing.error }
    } finally {
      // Handed to a delivery waiting here, or given back to Redis without holding up this one.
      void slot?.()
    }
    const durationMs = Math.round(performance.now() - started)

    const gone = answer.status === 410
    const succeeded = answer.error === null
    const delayMs = succeeded || gone || endpoint.status === 'disabled' ? null : retryDelayMs(attempt, deps.retryScale)
    const status = succeeded ? 'succeeded' : delayMs === null ? 'failed' : 'retrying'
    const record: AttemptRecord = {
      deliveryId, endpointId: endpoint.id, eventId: event.id, eventType: event.type, attempt, status,
      responseStatus: answer.status, durationMs, error: answer.error,
      nextAttemptAt: delayMs === null ? null : new Date(Date.now() + delayMs),
    }
    await deps.rows.record(record, gone ? 'the endpoint answered 410 Gone' : null)
    span.setAttribute('courier.outcome', status)
    if (answer.status !== null) span.setAttribute('http.response.status_code', answer.status)
    const metrics = instruments()
    metrics.webhookDeliveries.add(1, { outcome: status })
    metrics.webhookAttemptDuration.record(durationMs / 1000, { outcome: status })
    if (status === 'succeeded') return { kind: 'succeeded' }
    const reason = answer.error ?? 'failed'
    return delayMs === null ? { kind: 'failed', reason } : { kind: 'retrying', delayMs, reason }
  }))
}
