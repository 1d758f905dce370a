import { request, type Dispatcher } from 'undici'
import { z } from 'zod'
import { findEventById, type StoredEvent } from '../../shared/db/events.js'
import type { Sql } from '../../shared/db/sql.js'
import { findDelivery, findEndpointById, recordAttempt, type AttemptRecord, type WebhookEndpoint } from '../../shared/db/webhooks.js'
import { toEventResource } from '../../shared/orders/resource.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { continuingTrace, inSpan } from '../../shared/telemetry/tracing.js'
import { MAX_ATTEMPTS, retryDelayMs } from '../../shared/webhooks/queue.js'
import { signedHeaders } from '../../shared/webhooks/signing.js'
import { openSecrets } from '../../shared/webhooks/endpoints.js'
import type { SecretBox } from '../../shared/webhooks/secret-box.js'
import { checkWebhookUrl, type UrlRules } from '../../shared/webhooks/url-rules.js'
import type { EndpointSlots, ReleaseSlot } from './endpoint-slots.js'

export interface DeliverDeps {
  sql: Sql
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
  // Nothing to do: the delivery is at rest already, or its endpoint or event is gone.
  z.object({ kind: z.literal('skipped') }),
  // A crash left the job running before the delivery's next attempt is due.
  z.object({ kind: z.literal('early'), delayMs: z.number().int().nonnegative() }),
  // The endpoint has WEBHOOK_ENDPOINT_CONCURRENCY deliveries in flight: run again shortly, no attempt counted.
  z.object({ kind: z.literal('busy'), delayMs: z.number().int().nonnegative() }),
])
export type AttemptOutcome = z.infer<typeof attemptOutcomeSchema>

// An endpoint that fails this many deliveries in a row is disabled.
const DISABLE_AFTER_FAILED_DELIVERIES = 10
const MAX_ERROR_LENGTH = 500
// How long a delivery waits in hand for a slot of its endpoint, then aside before it looks again.
const SLOT_WAIT_MS = 250
const BUSY_RETRY_MS = 1000

/** What the receiver answered, or why there was no answer. */
type Answer = { status: number; error: null } | { status: number | null; error: string }

/**
 * One attempt of one delivery (docs/contracts.md section 7): reads the delivery, its event and
 * endpoint, checks the URL again, signs and POSTs the event, and records the attempt in one
 * statement. 2xx succeeds; 410 disables the endpoint; anything else is retried on the
 * schedule until the last attempt, after which the delivery has failed. While its endpoint
 * already has WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight, none is made: `busy`.
 */
export async function deliver(deps: DeliverDeps, deliveryId: number): Promise<AttemptOutcome> {
  const { sql } = deps
  const delivery = await findDelivery(sql, deliveryId)
  if (!delivery || delivery.status === 'succeeded' || delivery.status === 'failed') return { kind: 'skipped' }
  const waitMs = delivery.nextAttemptAt.getTime() - Date.now()
  if (delivery.attempts > 0 && waitMs > 1000) return { kind: 'early', delayMs: waitMs }
  const [event, endpoint] = await Promise.all([findEventById(sql, delivery.eventId), findEndpointById(sql, delivery.endpointId)])
  if (!event || !endpoint) return { kind: 'skipped' }

  const slot = endpoint.status === 'disabled' ? null : await deps.slots.acquire(endpoint.id, SLOT_WAIT_MS)
  if (endpoint.status !== 'disabled' && !slot) return { kind: 'busy', delayMs: BUSY_RETRY_MS + Math.floor(Math.random() * BUSY_RETRY_MS) }
  return attemptDelivery(deps, deliveryId, delivery.attempts + 1, event, endpoint, slot)
}

/**
 * The attempt itself: POST (unless the endpoint is disabled), then the record of it. The
 * endpoint's slot is held for the POST only: what limits a slow receiver is requests in flight
 * to it, not our own write of the outcome.
 */
async function attemptDelivery(deps: DeliverDeps, deliveryId: number, attempt: number, event: StoredEvent, endpoint: WebhookEndpoint, slot: ReleaseSlot | null): Promise<AttemptOutcome> {
  const { sql } = deps
  const attributes = { 'courier.event_id': event.id, 'courier.endpoint_id': endpoint.id, 'courier.attempt': attempt }
  // The span continues the trace of the transaction that wrote the event.
  return continuingTrace(event.traceparent, () => inSpan('webhook.deliver', attributes, async (span) => {
    const started = performance.now()
    let answer: Answer
    try {
      answer = endpoint.status === 'disabled'
        ? { status: null, error: `endpoint is disabled: ${endpoint.disabledReason ?? 'by the business'}` }
        : await post(deps, endpoint, event.id, JSON.stringify(toEventResource(event)))
    } finally {
      await slot?.()
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
    await recordAttempt(sql, record, {
      disableReason: gone ? 'the endpoint answered 410 Gone' : null,
      disableAfter: DISABLE_AFTER_FAILED_DELIVERIES,
    })
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

/** POSTs the signed body; undici follows no redirect, and nothing waits past `timeoutMs`. */
async function post(deps: DeliverDeps, endpoint: WebhookEndpoint, eventId: string, body: string): Promise<Answer> {
  const verdict = await checkWebhookUrl(endpoint.url, deps.rules)
  if (!verdict.ok) return { status: null, error: verdict.message }
  try {
    const response = await request(verdict.url, {
      method: 'POST',
      body,
      headers: signedHeaders(openSecrets(endpoint, deps.secrets), eventId, body, new Date()),
      dispatcher: deps.dispatcher,
      headersTimeout: deps.timeoutMs,
      bodyTimeout: deps.timeoutMs,
      signal: AbortSignal.timeout(deps.timeoutMs),
    })
    // The receiver's body is not ours to keep; reading a little of it frees the connection.
    await response.body.dump({ limit: 4096 }).catch(() => {})
    const status = response.statusCode
    if (status >= 200 && status < 300) return { status, error: null }
    return { status, error: `the endpoint answered ${status}` }
  } catch (err) {
    return { status: null, error: (err instanceof Error ? err.message : String(err)).slice(0, MAX_ERROR_LENGTH) }
  }
}
