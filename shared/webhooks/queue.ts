import type { JobsOptions, Queue } from 'bullmq'
import type { Delivery, FailureLimit } from '../db/webhooks.js'

export const WEBHOOK_QUEUE = 'webhooks'

/** A delivery's job: the delivery row's id only. The event and endpoint are read when it runs. */
export interface WebhookJob {
  delivery_id: number
}

/**
 * `{event id}:{endpoint id}:{redelivery}`: the relay's delivery is `…:0`, so relaying an event
 * twice queues it once; each redelivery has its own number. (BullMQ 6 refuses a custom id with
 * exactly one colon, so the relay's own delivery carries its 0.)
 */
export function webhookJobId(delivery: Pick<Delivery, 'eventId' | 'endpointId' | 'redelivery'>): string {
  return `${delivery.eventId}:${delivery.endpointId}:${delivery.redelivery}`
}

/** The waits after each failed attempt, in seconds: 8 attempts over about 28 hours. */
export const RETRY_SCHEDULE_S = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const
export const MAX_ATTEMPTS = RETRY_SCHEDULE_S.length + 1

/** The wait after failed attempt `attempt` (1-based), scaled and with ±10 % jitter; null after the last. */
export function retryDelayMs(attempt: number, scale: number, random: () => number = Math.random): number | null {
  const base = RETRY_SCHEDULE_S[attempt - 1]
  if (base === undefined) return null
  return Math.round(base * 1000 * scale * (0.9 + 0.2 * random()))
}

/**
 * DESIGN 9: "10 consecutive failed deliveries (over 5 days)" disable an endpoint. Both must hold:
 * the count alone would disable a busy business's endpoint after a day and a bit of downtime
 * (ten deliveries fail as soon as their ~28 h schedules run out), which the days are there to
 * prevent.
 */
export const DISABLE_AFTER = { failedDeliveries: 10, failingDays: 5 } as const

/** The sender's rule of `DISABLE_AFTER`, its span multiplied by the retry scale as the schedule is. */
export function failureLimit(scale: number): FailureLimit {
  const { failedDeliveries, failingDays } = DISABLE_AFTER
  return { failedDeliveries, failingForS: failingDays * 24 * 3600 * scale, reason: `${failedDeliveries} deliveries in a row failed over ${failingDays} days` }
}

/**
 * The delivery row decides when to retry and when to give up; BullMQ only keeps the job until
 * then, so its own attempt count is set past ours. A job that finished leaves Redis at once.
 */
export function webhookJobOptions(delivery: Delivery, now: number): JobsOptions {
  return {
    jobId: webhookJobId(delivery),
    delay: Math.max(0, delivery.nextAttemptAt.getTime() - now),
    attempts: MAX_ATTEMPTS + 20,
    backoff: { type: 'delivery-schedule' },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600, count: 1000 },
  }
}

// Jobs added in one go. BullMQ adds a bulk in one MULTI, which Redis runs whole before anything
// else; a relayed append of thousands of events would hold up every sender's next job until the
// last of them is in. In chunks, the first deliveries start while the rest are being added.
const QUEUE_CHUNK = 100

/** Queues deliveries whose rows are written; a job already queued under the same id is left as it is. */
export async function queueDeliveries(queue: Queue<WebhookJob>, deliveries: Delivery[]): Promise<void> {
  for (let from = 0; from < deliveries.length; from += QUEUE_CHUNK) {
    const now = Date.now()
    await queue.addBulk(deliveries.slice(from, from + QUEUE_CHUNK).map((delivery) => ({ name: 'deliver', data: { delivery_id: delivery.id }, opts: webhookJobOptions(delivery, now) })))
  }
}
