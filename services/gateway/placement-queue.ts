import { Queue, QueueEvents } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../../shared/config.js'
import { discardPendingPlacement, findPlacementsByIds, type PlacementOutcome } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { createRedis } from '../../shared/redis.js'
import { withDeadline } from '../../shared/deadline.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { PLACEMENT_QUEUE, placementJobOptions, type PlacementJob } from '../../shared/placement-queue.js'

const POLL_MS = 1000
const ENQUEUE_DEADLINE_MS = 2000
const CLOSE_DEADLINE_MS = 3000

interface Waiter {
  resolve: (outcome: PlacementOutcome) => void
  timer: NodeJS.Timeout
}

/**
 * Queues placements and waits for their outcomes. One QueueEvents stream per process feeds a
 * map of waiting requests; because its events are best-effort, one poll a second also re-reads
 * every waited-for placement row, so a missed event costs a second, never a hung request.
 */
export function createPlacementQueue(config: GatewayConfig, sql: Sql, log: FastifyBaseLogger) {
  // No offline queue: with Redis down, `add` fails at once and the caller gets a 503.
  const producer = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  producer.on('error', (err) => log.debug({ err: err.message }, 'placement producer connection error'))
  // The job carries the trace context, so the worker's spans join the request's trace.
  const queue = new Queue<PlacementJob>(PLACEMENT_QUEUE, { connection: producer, prefix: config.QUEUE_PREFIX, telemetry: new BullMQOtel({ tracerName: 'courier' }) })
  queue.on('error', (err) => log.debug({ err: err.message }, 'placement queue error'))
  const listener = createRedis(config, { maxRetriesPerRequest: null })
  listener.on('error', (err) => log.debug({ err: err.message }, 'queue events connection error'))
  const events = new QueueEvents(PLACEMENT_QUEUE, { connection: listener, prefix: config.QUEUE_PREFIX })
  events.on('error', (err) => log.debug({ err: err.message }, 'queue events error'))

  const waiters = new Map<string, Waiter>()

  /**
   * BullMQ waits for a reconnecting client instead of failing; a caller must not. A first
   * connect (a fresh process, a cluster discovering its slots) is worth a short wait.
   */
  async function producerReady(): Promise<void> {
    if (producer.status === 'ready') return
    if (producer.status !== 'connecting' && producer.status !== 'connect') throw new Error(`Redis connection is ${producer.status}`)
    await withDeadline(new Promise<void>((resolve) => producer.once('ready', () => resolve())), ENQUEUE_DEADLINE_MS)
  }

  function settle(placementId: string, outcome: PlacementOutcome) {
    const waiter = waiters.get(placementId)
    if (!waiter) return
    waiters.delete(placementId)
    clearTimeout(waiter.timer)
    waiter.resolve(outcome)
  }

  events.on('completed', ({ jobId, returnvalue }) => {
    const outcome = (typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as PlacementOutcome
    // 410: the worker found the row already discarded; nothing was placed.
    settle(jobId, outcome.statusCode === 410 ? unavailable(jobId) : outcome)
  })

  const poller = setInterval(async () => {
    if (waiters.size === 0) return
    const ids = [...waiters.keys()]
    try {
      const rows = await findPlacementsByIds(sql, ids)
      const seen = new Set(rows.map((row) => row.id))
      for (const row of rows) if (row.outcome) settle(row.id, row.outcome)
      // A row that vanished was discarded after its job failed for good.
      for (const id of ids) if (!seen.has(id)) settle(id, unavailable(id))
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'placement poll failed')
    }
  }, POLL_MS)
  poller.unref()

  return {
    /** Queues the placement and resolves with its outcome, or a 503 once the wait runs out. */
    async submit(job: PlacementJob): Promise<PlacementOutcome> {
      const outcome = new Promise<PlacementOutcome>((resolve) => {
        const timer = setTimeout(() => settle(job.placementId, timedOut(job.placementId)), config.PLACEMENT_TIMEOUT_MS)
        waiters.set(job.placementId, { resolve, timer })
      })
      try {
        await producerReady()
        // A job that lands after the deadline finds its row discarded and moves no money (place.ts).
        await withDeadline(queue.add('place', job, { ...placementJobOptions, jobId: job.placementId }), ENQUEUE_DEADLINE_MS)
      } catch (err) {
        const waiter = waiters.get(job.placementId)
        if (waiter) clearTimeout(waiter.timer)
        waiters.delete(job.placementId)
        log.warn({ err: (err as Error).message, placementId: job.placementId }, 'could not queue placement')
        await discardPendingPlacement(sql, job.placementId).catch(() => {})
        throw new ApiError(503, 'Placement is temporarily unavailable, retry shortly')
      }
      return outcome
    },

    async close(): Promise<void> {
      clearInterval(poller)
      for (const id of [...waiters.keys()]) settle(id, timedOut(id))
      // Bounded: BullMQ's close can wait forever on a connection that lived through a Redis restart.
      await withDeadline(events.close(), CLOSE_DEADLINE_MS).catch(() => listener.disconnect())
      await withDeadline(queue.close(), CLOSE_DEADLINE_MS).catch(() => {})
      listener.disconnect()
      producer.disconnect()
    },
  }
}

export type PlacementQueue = ReturnType<typeof createPlacementQueue>

function timedOut(placementId: string): PlacementOutcome {
  return {
    statusCode: 503,
    body: {
      message: `Placement is still being processed; retry with the same Idempotency-Key or read GET /v2/business/placements/${placementId}`,
      placement_id: placementId,
    },
  }
}

function unavailable(placementId: string): PlacementOutcome {
  return { statusCode: 503, body: { message: 'Placement could not be completed, retry shortly', placement_id: placementId } }
}
