import { Queue, QueueEvents } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../../shared/config.js'
import { findPlacementsByIds, settleNotProcessed } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { createRedis } from '../../shared/redis.js'
import { withDeadline } from '../../shared/deadline.js'
import { NOT_PROCESSED, type PlacementOutcome } from '../../shared/placement/outcome.js'
import { PLACEMENT_QUEUE, placementJobOptions, type PlacementJob } from '../../shared/placement-queue.js'

const POLL_MS = 1000
const ENQUEUE_DEADLINE_MS = 2000
const CLOSE_DEADLINE_MS = 3000

/** What a wait ends with: the stored outcome, or null when none was stored in time. */
type Settled = PlacementOutcome | null

interface Waiter {
  resolve: (outcome: Settled) => void
  timer: NodeJS.Timeout
}

/**
 * Queues placements and waits for their outcomes. The placement row is the answer: a
 * QueueEvents 'completed' only says "look now", and because its events are best-effort, one
 * poll a second also re-reads every waited-for row, so a missed event costs a second, never a
 * hung request.
 */
export function createPlacementQueue(config: GatewayConfig, sql: Sql, log: FastifyBaseLogger) {
  // No offline queue: with Redis down, `add` fails at once and the caller gets a 503.
  const producer = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
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

  function settle(placementId: string, outcome: Settled) {
    const waiter = waiters.get(placementId)
    if (!waiter) return
    waiters.delete(placementId)
    clearTimeout(waiter.timer)
    waiter.resolve(outcome)
  }

  /** Reads the rows of `ids` and answers the waiters whose placement is settled. */
  async function look(ids: string[]): Promise<void> {
    try {
      for (const row of await findPlacementsByIds(sql, ids)) if (row.outcome) settle(row.id, row.outcome)
    } catch (err) {
      log.warn({ err }, 'placement read failed')
    }
  }

  // One XREAD brings many completions at once under load: the ones of the same turn of the
  // event loop are read with one query, not one each (a Postgres round trip is a socket write,
  // the gateway's costliest step per placement; docs/performance.md).
  let due: string[] = []
  events.on('completed', ({ jobId }) => {
    if (!waiters.has(jobId)) return
    due.push(jobId)
    if (due.length > 1) return
    setImmediate(() => {
      const ids = due
      due = []
      void look(ids)
    })
  })

  const poller = setInterval(() => {
    if (waiters.size > 0) void look([...waiters.keys()])
  }, POLL_MS)
  poller.unref()

  return {
    /**
     * Queues the recorded placement and resolves with its stored outcome, or null once the
     * wait runs out. When the job cannot be queued, the placement is settled not processed,
     * unless its job got through after all and the worker settled it first; then the wait
     * goes on for that outcome, so a job that may run is never reported as not placed.
     */
    async submit(job: PlacementJob): Promise<Settled> {
      const id = job.placement_id
      const outcome = new Promise<Settled>((resolve) => {
        const timer = setTimeout(() => settle(id, null), config.PLACEMENT_TIMEOUT_MS)
        waiters.set(id, { resolve, timer })
      })
      try {
        await producerReady()
        await withDeadline(queue.add('place', job, { ...placementJobOptions, jobId: id }), ENQUEUE_DEADLINE_MS)
      } catch (err) {
        log.warn({ err, placementId: id }, 'could not queue placement')
        // A job that lands after this finds its row settled and moves no money (place.ts).
        const mine = await settleNotProcessed(sql, id, NOT_PROCESSED).catch(() => null)
        if (mine === true) settle(id, NOT_PROCESSED)
        // Unknown (Postgres unreachable too): answer at once with the id; the settler finishes.
        else if (mine === null) settle(id, null)
        // Lost: the worker settled it first; its outcome is on the row.
        else await look([id])
      }
      return outcome
    },

    async close(): Promise<void> {
      clearInterval(poller)
      for (const id of [...waiters.keys()]) settle(id, null)
      // Bounded: BullMQ's close can wait forever on a connection that lived through a Redis restart.
      await withDeadline(events.close(), CLOSE_DEADLINE_MS).catch(() => listener.disconnect())
      await withDeadline(queue.close(), CLOSE_DEADLINE_MS).catch(() => {})
      listener.disconnect()
      producer.disconnect()
    },
  }
}

export type PlacementQueue = ReturnType<typeof createPlacementQueue>
