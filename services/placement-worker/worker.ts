import { Queue, Worker } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { WorkerConfig } from '../../shared/config.js'
import { discardPendingPlacement, findStalePending, releaseExpiredKeys, type PlacementOutcome } from '../../shared/db/placements.js'
import { createSql, type Sql } from '../../shared/db/sql.js'
import { createRedis } from '../../shared/redis.js'
import { createGeocoder } from '../../shared/geo/geocoder.js'
import healthRoutes from '../../shared/http/health.js'
import { requestMetrics } from '../../shared/http/observability.js'
import { createDistanceProvider } from '../../shared/pricing/distance.js'
import { PLACEMENT_QUEUE, type PlacementJob } from '../../shared/placement-queue.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { place } from './place.js'

const KEY_SWEEP_MS = 15 * 60 * 1000
const ORPHAN_AFTER_MIN = 10

/**
 * The placement worker as a plugin of its health server: it opens the queue consumer and the
 * pool, and on close waits for the job in hand before letting go of them.
 */
async function placementWorker(app: FastifyInstance, { config }: { config: WorkerConfig }) {
  await app.register(requestMetrics)
  // Each concurrent job holds at most one connection; two spare serve health and the sweep.
  const sql = createSql(config, { max: Math.max(config.DATABASE_POOL_MAX, config.WORKER_CONCURRENCY + 2) })
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  connection.on('error', (err) => app.log.warn({ err: err.message }, 'redis connection error'))
  const deps = { sql, geocoder: createGeocoder(config, sql), distance: createDistanceProvider(config), serviceArea: config.SERVICE_AREA_BBOX, currency: config.CURRENCY }

  const worker = new Worker<PlacementJob, PlacementOutcome>(PLACEMENT_QUEUE, (job) => placeAndMeasure(job.data), {
    connection,
    // Continues the trace the gateway started when it queued the job.
    telemetry: new BullMQOtel({ tracerName: 'courier' }),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDuration: config.WORKER_LOCK_MS,
    stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: 3,
  })
  async function placeAndMeasure(job: PlacementJob): Promise<PlacementOutcome> {
    const started = performance.now()
    const outcome = await place(deps, job)
    const { placements, jobDuration, orders, charged } = instruments()
    const result = outcomeName(outcome)
    placements.add(1, { outcome: result })
    jobDuration.record((performance.now() - started) / 1000, { outcome: result })
    if (outcome.statusCode === 201) {
      const body = outcome.body as { orders: unknown[]; charged_total: number; currency: string }
      orders.add(body.orders.length)
      charged.add(body.charged_total, { currency: body.currency })
    }
    return outcome
  }

  // Queue depth for dashboards and autoscaling, read from Redis when Prometheus scrapes.
  const queue = new Queue(PLACEMENT_QUEUE, { connection, prefix: config.QUEUE_PREFIX })
  instruments().meter.createObservableGauge('courier_queue_jobs', { description: 'Placement jobs by state' }).addCallback(async (result) => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'failed').catch(() => null)
    for (const [state, count] of Object.entries(counts ?? {})) result.observe(count, { queue: PLACEMENT_QUEUE, state })
  })

  worker.on('error', (err) => app.log.error({ err }, 'placement worker error'))
  worker.on('failed', (job, err) => {
    if (!job) return
    app.log.warn({ placementId: job.id, attempt: job.attemptsMade, err: err.message }, 'placement attempt failed')
    // Out of retries: a fault is never stored as an outcome, so the key is freed for a retry.
    if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
      discardPendingPlacement(sql, job.data.placementId).catch((error) => app.log.error({ err: error }, 'could not discard placement'))
    }
  })

  const sweep = setInterval(() => {
    releaseExpiredKeys(sql, config.IDEMPOTENCY_TTL_H).catch((err) => app.log.warn({ err: err.message }, 'idempotency sweep failed'))
    discardOrphans(sql, queue).catch((err) => app.log.warn({ err: err.message }, 'orphan sweep failed'))
  }, KEY_SWEEP_MS).unref()

  app.addHook('onClose', async () => {
    clearInterval(sweep)
    await worker.close()
    await queue.close()
    connection.disconnect()
    await sql.end({ timeout: 5 })
  })

  await app.register(healthRoutes, { sql, redis: connection })
}

export const startPlacementWorker = fp(placementWorker, { name: 'placement-worker' })

/**
 * A gateway that died between recording a placement and queueing it leaves a pending row no job
 * will ever settle, holding its Idempotency-Key. Rows pending for long with no job are dropped.
 */
export async function discardOrphans(sql: Sql, queue: Queue): Promise<void> {
  for (const id of await findStalePending(sql, ORPHAN_AFTER_MIN)) {
    if (!(await queue.getJob(id))) await discardPendingPlacement(sql, id)
  }
}

function outcomeName(outcome: PlacementOutcome): string {
  if (outcome.statusCode === 201) return 'placed'
  const message = (outcome.body as { message?: string }).message
  if (message === 'Insufficient wallet balance') return 'insufficient_balance'
  if (outcome.statusCode === 400) return 'unpriceable'
  return 'discarded'
}
