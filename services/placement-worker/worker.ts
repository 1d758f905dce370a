import { Queue, Worker } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { WorkerConfig } from '../../shared/config.js'
import { geocodeCacheTable } from '../../shared/db/geocode-cache.js'
import { releaseExpiredKeys, settleNotProcessed } from '../../shared/db/placements.js'
import { createSql, isPrivilegeError } from '../../shared/db/sql.js'
import { drainInBatches } from '../../shared/drain.js'
import { createRedis } from '../../shared/redis.js'
import { createGeocoder } from '../../shared/geo/geocoder.js'
import healthRoutes from '../../shared/http/health.js'
import { observeQueueJobs, watchWorker } from '../../shared/queue-liveness.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { createDistanceProvider } from '../../shared/pricing/routing.js'
import { toMajor } from '../../shared/money.js'
import { NOT_PROCESSED, type PlacementOutcome } from '../../shared/placement/outcome.js'
import { PLACEMENT_QUEUE, type PlacementJob } from '../../shared/placement-queue.js'
import { countOpenOrders } from '../../shared/db/orders.js'
import { createQuoteStore } from '../../shared/pricing/quote-store.js'
import { createCardVersions } from '../../shared/pricing/card-versions.js'
import { OPEN_STATUSES } from '../../shared/courier.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { readForScrape, UNREAD } from '../../shared/telemetry/scrape-read.js'
import { createDispatchQueue } from '../../shared/dispatch/queue.js'
import { place } from './place.js'
import { startSandboxCourier } from './sandbox-courier.js'
import { settleOrphans } from './sweeps.js'
import { erasePersonalDataOlderThan } from '../../shared/orders/personal-data.js'
import { createPhotoStore } from '../../shared/storage/photos.js'
import { repeatWithoutOverlap } from '../../shared/repeat.js'
import { keepPartitions, pruneSettledDeliveries, type HistoryRetention } from '../../shared/orders/history.js'

const SWEEP_MS = 15 * 60 * 1000
// Expired Idempotency-Keys freed a statement at a time.
const KEY_BATCH = 1000
// Often enough that an orphan is settled a few seconds after PLACEMENT_ORPHAN_AFTER_S.
const SETTLE_EVERY_MS = 2000

/**
 * The placement worker as a plugin of its health server: it opens the queue consumer and the
 * pool, and on close waits for the job in hand before letting go of them.
 */
async function placementWorker(app: FastifyInstance, { config }: { config: WorkerConfig }) {
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  // Each concurrent job holds at most one connection; two spare serve health and the sweep.
  const sql = createSql(config, { max: Math.max(config.DATABASE_POOL_MAX, config.WORKER_CONCURRENCY + 2), timeouts: config })
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  connection.on('error', (err) => app.log.warn({ err: err.message }, 'redis connection error'))
  // Held quotes are read with plain commands: a Redis that does not answer fails the job, to be retried.
  const quoteRedis = createRedis(config, { maxRetriesPerRequest: 1, commandTimeout: 2000 })
  quoteRedis.on('error', (err) => app.log.debug({ err: err.message }, 'redis connection error (quotes)'))
  const dispatch = createDispatchQueue(config, app.log)
  const sandbox = startSandboxCourier(app, {
    sql, connection, prefix: config.QUEUE_PREFIX, stepS: config.SANDBOX_STEP_S, lockMs: config.WORKER_LOCK_MS, stalledIntervalMs: config.WORKER_STALLED_INTERVAL_MS,
  })
  const deps = {
    sql, quotes: createQuoteStore(quoteRedis, config.QUEUE_PREFIX, config.QUOTE_SIGNING_KEY), geocoder: createGeocoder(config, geocodeCacheTable(sql, config.GEOCODE_CACHE_TTL_S)),
    distance: createDistanceProvider(config), serviceArea: config.SERVICE_AREA_BBOX, currency: config.CURRENCY, startSandboxOrders: sandbox.start,
    cards: createCardVersions(sql), offerOrders: dispatch.offer, trackingBaseUrl: config.TRACKING_PUBLIC_URL ?? config.CONSOLE_PUBLIC_URL,
  }

  // The job's return value is nothing: its outcome is on the placement row.
  const worker = new Worker<PlacementJob, void>(PLACEMENT_QUEUE, async (job) => { await placeAndMeasure(job.data) }, {
    connection,
    // Continues the trace the gateway started when it queued the job.
    telemetry: new BullMQOtel({ tracerName: 'courier' }),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDuration: config.WORKER_LOCK_MS,
    stalledInterval: config.WORKER_STALLED_INTERVAL_MS,
    maxStalledCount: 3,
  })
  async function placeAndMeasure(job: PlacementJob): Promise<PlacementOutcome | null> {
    const started = performance.now()
    const outcome = await place(deps, job)
    const { placements, jobDuration, orders, charged } = instruments()
    const result = outcome?.kind ?? 'skipped'
    placements.add(1, { outcome: result })
    jobDuration.record((performance.now() - started) / 1000, { outcome: result })
    if (outcome?.kind === 'placed') {
      orders.add(outcome.orders.length)
      charged.add(toMajor(outcome.chargedTotal), { currency: outcome.currency })
    }
    return outcome
  }

  // Queue depth for dashboards and autoscaling, read from Redis when Prometheus scrapes.
  const queue = new Queue<PlacementJob>(PLACEMENT_QUEUE, { connection, prefix: config.QUEUE_PREFIX })
  observeQueueJobs(queue, sandbox.queue)

  // Orders not yet at rest, by status, counted on the partial index when Prometheus scrapes.
  // Every replica reports the same figure: dashboards take max() across them.
  instruments().meter.createObservableGauge('courier_orders_open', { description: 'Orders not yet delivered, cancelled or returned, by status' }).addCallback(async (result) => {
    const counts = await readForScrape(() => countOpenOrders(sql))
    for (const status of OPEN_STATUSES) result.observe(counts === null ? UNREAD : counts.find((row) => row.status === status)?.count ?? 0, { status })
  })

  worker.on('error', (err) => app.log.error({ err }, 'placement worker error'))
  worker.on('failed', (job, err) => {
    if (!job) return
    app.log.warn({ placementId: job.id, attempt: job.attemptsMade, err: err.message }, 'placement attempt failed')
    // Out of retries: it will never run, so it is settled not processed and its key freed.
    // Should this fail (Postgres down), the settler does it later.
    if (job.attemptsMade >= (job.opts.attempts ?? 1)) {
      settleNotProcessed(sql, job.data.placement_id, NOT_PROCESSED).catch((error) => app.log.error({ err: error }, 'could not settle a failed placement'))
    }
  })

  const settler = repeatWithoutOverlap(SETTLE_EVERY_MS, async () => {
    const settled = await settleOrphans(sql, queue, config.PLACEMENT_ORPHAN_AFTER_S)
    if (settled.length > 0) app.log.warn({ placementIds: settled }, 'settled placements no job backs as not processed')
  }, (err) => app.log.warn({ err }, 'placement settler failed'))

  const photos = createPhotoStore(config)
  // Months of events, attempts and trails made ahead and dropped past retention, and settled
  // deliveries pruned: now, and with every sweep. The months are DDL: where this worker's role may
  // not (deploy/postgres/roles.sql), the migrate CLI's daily run as the owner does them.
  const retention: HistoryRetention = { eventRetentionD: config.EVENT_RETENTION_D, trailRetentionD: config.PERSONAL_DATA_RETENTION_D }
  let partitionsRefused = false
  const upkeep = async () => {
    if (!partitionsRefused) {
      const kept = await keepPartitions(sql, retention).catch((err: unknown) => {
        if (!isPrivilegeError(err)) throw err
        partitionsRefused = true
        app.log.info('history partitions are left to the migration role (npm run migrate, daily): this role may not change tables')
        return null
      })
      if (kept && kept.created.length + kept.dropped.length + kept.strays > 0) app.log.info(kept, 'history partitions kept')
    }
    const deliveries = await pruneSettledDeliveries(sql, config.EVENT_RETENTION_D)
    if (deliveries > 0) app.log.info({ deliveries }, 'settled webhook deliveries past retention deleted')
  }
  upkeep().catch((err) => app.log.warn({ err: err.message }, 'history upkeep failed'))
  const sweep = setInterval(() => {
    upkeep().catch((err) => app.log.warn({ err: err.message }, 'history upkeep failed'))
    drainInBatches(KEY_BATCH, (limit) => releaseExpiredKeys(sql, config.IDEMPOTENCY_TTL_H, limit)).catch((err) => app.log.warn({ err: err.message }, 'idempotency sweep failed'))
    erasePersonalDataOlderThan(sql, photos, config.PERSONAL_DATA_RETENTION_D).catch((err) => app.log.warn({ err: err.message }, 'personal data sweep failed'))
  }, SWEEP_MS).unref()

  app.addHook('onClose', async () => {
    clearInterval(settler)
    clearInterval(sweep)
    await worker.close()
    await sandbox.close()
    await dispatch.close()
    await queue.close()
    connection.disconnect()
    quoteRedis.disconnect()
    await sql.end({ timeout: 5 })
  })

  const liveness = watchWorker(worker, queue, config.QUEUE_STUCK_S * 1000)
  await app.register(healthRoutes, { sql, redis: connection, needsRedis: true, taking: liveness.taking })
}

export const startPlacementWorker = fp(placementWorker, { name: 'placement-worker' })
