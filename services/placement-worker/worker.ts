import { Worker } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Redis } from 'ioredis'
import type { WorkerConfig } from '../../shared/config.js'
import { discardPendingPlacement, releaseExpiredKeys, type PlacementOutcome } from '../../shared/db/placements.js'
import { createSql } from '../../shared/db/sql.js'
import { createGeocoder } from '../../shared/geo/geocoder.js'
import healthRoutes from '../../shared/http/health.js'
import { createDistanceProvider } from '../../shared/pricing/distance.js'
import { PLACEMENT_QUEUE, type PlacementJob } from '../../shared/placement-queue.js'
import { place } from './place.js'

const KEY_SWEEP_MS = 15 * 60 * 1000

/**
 * The placement worker as a plugin of its health server: it opens the queue consumer and the
 * pool, and on close waits for the job in hand before letting go of them.
 */
async function placementWorker(app: FastifyInstance, { config }: { config: WorkerConfig }) {
  // Each concurrent job holds at most one connection; two spare serve health and the sweep.
  const sql = createSql(config, { max: Math.max(config.DATABASE_POOL_MAX, config.WORKER_CONCURRENCY + 2) })
  const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null })
  connection.on('error', (err) => app.log.warn({ err: err.message }, 'redis connection error'))
  const deps = { sql, geocoder: createGeocoder(config, sql), distance: createDistanceProvider(config), currency: config.CURRENCY }

  const worker = new Worker<PlacementJob, PlacementOutcome>(PLACEMENT_QUEUE, (job) => place(deps, job.data), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDuration: config.WORKER_LOCK_MS,
    stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: 3,
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
  }, KEY_SWEEP_MS).unref()

  app.addHook('onClose', async () => {
    clearInterval(sweep)
    await worker.close()
    connection.disconnect()
    await sql.end({ timeout: 5 })
  })

  await app.register(healthRoutes, { sql, redis: connection })
}

export const startPlacementWorker = fp(placementWorker, { name: 'placement-worker' })
