import { Queue, type JobsOptions } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyBaseLogger } from 'fastify'
import type { CommonConfig } from '../config.js'
import { createRedis } from '../redis.js'

export const DISPATCH_QUEUE = 'dispatch'

/**
 * A dispatcher's job: ids only. `offer` looks for the order's next courier (the round started
 * at `round` when set, else when the order last became `created`); `expire` closes an offer
 * whose time is up and moves the order on.
 */
export type DispatchJob = { kind: 'offer'; order_id: string; round?: string } | { kind: 'expire'; offer_id: string; order_id: string }

const base: JobsOptions = { attempts: 5, backoff: { type: 'exponential', delay: 500 }, removeOnComplete: true, removeOnFail: { age: 3600, count: 1000 } }

/** One waiting `offer` job per order: asking twice while one waits asks once. */
export function offerJob(orderId: string, delayMs = 0, round?: string): { name: string; data: DispatchJob; opts: JobsOptions } {
  return { name: 'offer', data: round ? { kind: 'offer', order_id: orderId, round } : { kind: 'offer', order_id: orderId }, opts: { ...base, jobId: `offer-${orderId}`, delay: Math.max(0, Math.round(delayMs)) } }
}

export function expireJob(offerId: string, orderId: string, delayMs: number): { name: string; data: DispatchJob; opts: JobsOptions } {
  return { name: 'expire', data: { kind: 'expire', offer_id: offerId, order_id: orderId }, opts: { ...base, jobId: `expire-${offerId}`, delay: Math.max(0, Math.round(delayMs)) } }
}

/**
 * The producer the placement worker and the gateway use to say "offer these orders now". A job
 * lost here is found by the dispatcher's sweep: the order row is the truth.
 */
export function createDispatchQueue(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER' | 'QUEUE_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>, log: FastifyBaseLogger) {
  const connection = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
  connection.on('error', (err) => log.debug({ err: err.message }, 'dispatch producer connection error'))
  // Traced: the dispatch job continues the trace of the placement (or move) that asked for it.
  const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: config.QUEUE_PREFIX, telemetry: new BullMQOtel({ tracerName: 'courier' }) })
  queue.on('error', (err) => log.debug({ err: err.message }, 'dispatch queue error'))
  return {
    queue,
    /** Asks for offers of these live orders; a failure is logged, the sweep covers it. */
    async offer(orderIds: string[]): Promise<void> {
      if (orderIds.length === 0) return
      await queue.addBulk(orderIds.map((orderId) => offerJob(orderId))).catch((err) => log.warn({ err: (err as Error).message }, 'dispatch left to the sweep'))
    },
    async close() {
      await queue.close()
      connection.disconnect()
    },
  }
}

export type DispatchQueue = ReturnType<typeof createDispatchQueue>
