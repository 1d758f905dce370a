import { Queue, type JobsOptions } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { CommonConfig } from '../config.js'
import { createRedis } from '../redis.js'
import { errorMessage } from '../errors/error-message.js'

export const DISPATCH_QUEUE = 'dispatch'

/**
 * A dispatcher's job: ids only. `offer` looks for the order's next courier (the round started
 * at `round` when set, else when the order last became `created`); `offers` does that for each
 * order of one placement in one job, and gives its own `offer` job only to an order that must
 * wait (nobody free) or whose look failed; `expire` closes an offer whose time is up and moves the
 * order on; `free` says a courier can take an order now (a delivery done, an order handed back,
 * an offer declined, a shift begun), so the orders waiting near them are looked at again at once
 * instead of at their next retry.
 */
export type DispatchJob =
  | ({ kind: 'offer'; order_id: string } & Rounds)
  | { kind: 'offers'; order_ids: string[] }
  | { kind: 'expire'; offer_id: string; order_id: string }
  | { kind: 'free'; courier_id: string }

const base: JobsOptions = { attempts: 5, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: true, removeOnFail: { age: 3600, count: 1000 } }

/**
 * An order's dispatch rounds: `round`, when the current one began (unset: when the order last
 * became `created`); `next_round`, when a new one starts: the retry of a look that found nobody
 * to ask. Woken before then, the round goes on.
 */
export interface Rounds {
  round?: string
  next_round?: string
}

type JobSpec = { name: string; data: DispatchJob; opts: JobsOptions }

/** The id of an order's `offer` job: one per order, waiting or delayed. */
export const offerJobId = (orderId: string) => `offer-${orderId}`

/**
 * One waiting `offer` job per order: asking twice while one waits asks once. A job that fails for
 * good is removed (its failure is logged), so the sweep can queue the order again.
 */
export function offerJob(orderId: string, delayMs = 0, rounds: Rounds = {}): JobSpec {
  return { name: 'offer', data: { kind: 'offer', order_id: orderId, ...rounds }, opts: { ...base, jobId: offerJobId(orderId), delay: Math.max(0, Math.round(delayMs)), removeOnFail: true } }
}

/**
 * A placement's new orders, offered in one job: the placement worker queues one job however many
 * orders it placed (a hundred `offer` jobs were a fifth of its CPU on 100-order placements).
 */
export function offersJob(orderIds: string[]): JobSpec {
  return { name: 'offers', data: { kind: 'offers', order_ids: orderIds }, opts: base }
}

/** The id of an offer's `expire` job. */
export const expireJobId = (offerId: string) => `expire-${offerId}`

/**
 * An offer's `expire` job, due just after `delayMs`: rounded up and a millisecond on, since the
 * offer's time in JavaScript lost the microseconds the database keeps, and an expiry that ran a
 * moment early would leave the offer to the sweep.
 */
export function expireJob(offerId: string, orderId: string, delayMs: number): JobSpec {
  return { name: 'expire', data: { kind: 'expire', offer_id: offerId, order_id: orderId }, opts: { ...base, jobId: expireJobId(offerId), delay: Math.max(0, Math.ceil(delayMs) + 1) } }
}

/**
 * A `free` job's BullMQ priority. BullMQ runs every job without a priority before any job with
 * one, so a burst of couriers coming free (a shift starting, a dispatcher back after an outage)
 * waits behind new orders' offers and expiries instead of holding them back: a wake only brings
 * forward what the orders' own retries would do anyway.
 */
const WAKE_PRIORITY = 10

/**
 * One waiting `free` job per courier. A wake that fails is removed at once: kept, its id would
 * absorb every later wake of that courier until it was cleaned up, an hour on.
 */
export function freeJob(courierId: string): JobSpec {
  return { name: 'free', data: { kind: 'free', courier_id: courierId }, opts: { ...base, attempts: 1, jobId: `free-${courierId}`, priority: WAKE_PRIORITY, removeOnFail: true } }
}

/**
 * Has the order looked at now: an `offer` job queued, or the one already waiting under its id
 * brought forward when it is delayed to a retry (an add would be absorbed by it, and the order
 * would wait the retry out). One that is running, or finishing, may have looked before what asks
 * again (it is still telling the courier of the offer just declined), and its id absorbs an add:
 * a one-order `offers` job looks again beside it, and queues the order's retry if nobody can take
 * it, as a placement's job does. (Should the running job still hold the id then, the retry is
 * absorbed and the sweep takes the order up after `DISPATCH_RETRY_S`, as the retry would.)
 */
export async function lookNow(queue: Queue<DispatchJob>, orderId: string): Promise<void> {
  const job = await queue.getJob(offerJobId(orderId))
  if (!job) {
    await queue.add(...spread(offerJob(orderId)))
    return
  }
  // One read of the state: a job finishing between two reads would pass both.
  const state = await job.getState()
  if (state === 'delayed') await job.promote().catch(() => undefined)
  else if (state !== 'waiting' && state !== 'prioritized') await queue.add(...spread(lookAgainJob(orderId)))
}

/** The look beside a running one: one waiting per order, however many ask; removed if it fails, so it never holds the id. */
export function lookAgainJob(orderId: string): JobSpec {
  const job = offersJob([orderId])
  return { ...job, opts: { ...job.opts, jobId: `again-${orderId}`, removeOnFail: true } }
}

/** A job as `Queue.add` takes it. */
export function spread(job: JobSpec): [string, DispatchJob, JobsOptions] {
  return [job.name, job.data, job.opts]
}

/** Where the producer says what it left to the sweep: a service's logger, or the operator CLI's stderr. */
export interface ProducerLog {
  warn(fields: object, message: string): void
  debug(fields: object, message: string): void
}

/**
 * The producer the placement worker, the gateway, the console and the operator CLI use to say "look now". A job
 * lost here is found by the dispatcher's sweep: the order row is the truth.
 */
export function createDispatchQueue(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>, log: ProducerLog) {
  const connection = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
  connection.on('error', (err) => log.debug({ err: err.message }, 'dispatch producer connection error'))
  // Traced: the dispatch job continues the trace of the placement (or move) that asked for it.
  const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: config.QUEUE_PREFIX, telemetry: new BullMQOtel({ tracerName: 'courier' }) })
  queue.on('error', (err) => log.debug({ err: err.message }, 'dispatch queue error'))
  return {
    queue,
    /** Asks for offers of these live orders (one order's `offer` job, or one `offers` job for several); a failure is logged, the sweep covers it. */
    async offer(orderIds: string[]): Promise<void> {
      if (orderIds.length === 0) return
      const job = orderIds.length === 1 ? offerJob(orderIds[0]) : offersJob(orderIds)
      await queue.add(...spread(job)).catch((err) => log.warn({ err: errorMessage(err) }, 'dispatch left to the sweep'))
    },
    /**
     * Asks for the order's next offer now, though its `offer` job may wait delayed to a retry: an
     * offer declined, an order handed back. Lost, the sweep queues it (or the retry runs).
     */
    async offerAgain(orderId: string): Promise<void> {
      await lookNow(queue, orderId).catch((err) => log.warn({ err: errorMessage(err) }, 'dispatch left to the sweep'))
    },
    /** An offer accepted or declined needs no expiry: its delayed job goes, so no dispatcher spends a run on it. */
    async offerSettled(offerId: string): Promise<void> {
      await queue.remove(expireJobId(offerId)).catch((err) => log.debug({ err: errorMessage(err) }, 'expiry job left to run (it will find the offer settled)'))
    },
    /** Says the courier can take an order now; lost, it costs the waiting orders their retry delay. */
    async courierFree(courierId: string): Promise<void> {
      await queue.add(...spread(freeJob(courierId))).catch((err) => log.warn({ err: errorMessage(err) }, 'courier-free notice lost'))
    },
    async close() {
      await queue.close()
      connection.disconnect()
    },
  }
}

export type DispatchQueue = ReturnType<typeof createDispatchQueue>
