import { DelayedError, Queue, Worker } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Agent } from 'undici'
import type { WebhookSenderConfig } from '../../shared/config.js'
import { createSql } from '../../shared/db/sql.js'
import { webhookLagSeconds, type DeliverySweepCursor } from '../../shared/db/webhooks.js'
import healthRoutes from '../../shared/http/health.js'
import { observeQueueJobs, watchWorker } from '../../shared/queue-liveness.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { createRedis } from '../../shared/redis.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { readForScrape, UNREAD } from '../../shared/telemetry/scrape-read.js'
import { WEBHOOK_QUEUE, type WebhookJob } from '../../shared/webhooks/queue.js'
import { guardedLookup } from '../../shared/webhooks/url-rules.js'
import { createSecretBox, keepingOpened } from '../../shared/webhooks/secret-box.js'
import { deliver, type AttemptOutcome } from './deliver.js'
import { createDeliveryRows } from './delivery-rows.js'
import { createEndpointSlots } from './endpoint-slots.js'
import { purgeDeleted, relayOnce, requeueMissing } from './relay.js'
import { RetryLaterError } from './retry-later-error.js'
import { repeatWithoutOverlap } from '../../shared/repeat.js'
import { errorMessage } from '../../shared/errors/error-message.js'

// The sweep for deleted endpoints' rows and for deliveries whose job Redis lost.
const SWEEP_EVERY_MS = 5000
// Signing secrets kept opened: every endpoint a busy sender delivers to, with their rotations.
const OPENED_SECRETS = 1000

/**
 * The webhook sender as a plugin of its health server: the outbox relay (events → delivery
 * rows → jobs), the sweep that removes deleted endpoints' rows and re-queues what Redis lost, and
 * the consumer that delivers.
 */
async function webhookSender(app: FastifyInstance, { config }: { config: WebhookSenderConfig }) {
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  const sql = createSql(config, { max: Math.max(config.DATABASE_POOL_MAX, Math.min(config.WEBHOOK_CONCURRENCY, 20) + 2), timeouts: config })
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  connection.on('error', (err) => app.log.warn({ err: err.message }, 'redis connection error'))
  const rules = { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE }
  // Private addresses are refused again when the socket connects, whatever DNS said before.
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(rules), timeout: config.WEBHOOK_TIMEOUT_MS }, connections: 64, keepAliveTimeout: 10_000 })
  // A lease outlives the longest POST (its timeout) by far, so it is never taken back from a live one; one handed on is extended past half its life.
  const slots = createEndpointSlots(connection, { prefix: config.QUEUE_PREFIX, limit: config.WEBHOOK_ENDPOINT_CONCURRENCY, leaseMs: 2 * config.WEBHOOK_TIMEOUT_MS + 10_000 })
  const deps = { rows: createDeliveryRows(sql, { retryScale: config.WEBHOOK_RETRY_SCALE }), dispatcher, rules, secrets: keepingOpened(createSecretBox(config.WEBHOOK_SECRET_KEYS), OPENED_SECRETS), slots, timeoutMs: config.WEBHOOK_TIMEOUT_MS, retryScale: config.WEBHOOK_RETRY_SCALE }

  const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, { connection, prefix: config.QUEUE_PREFIX, telemetry: new BullMQOtel({ tracerName: 'courier' }) })
  queue.on('error', (err) => app.log.debug({ err: err.message }, 'webhook queue error'))

  const worker = new Worker<WebhookJob, AttemptOutcome['kind']>(WEBHOOK_QUEUE, async (job, token) => {
    const outcome = await deliver(deps, job.data.delivery_id)
    // Its endpoint is at its cap: back to the delayed set without spending one of the job's attempts.
    if (outcome.kind === 'busy') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token)
      throw new DelayedError()
    }
    // Another attempt later: BullMQ keeps the job and runs it after the wait the row recorded.
    if (outcome.kind === 'retrying') throw new RetryLaterError(outcome.reason, outcome.delayMs)
    if (outcome.kind === 'early') throw new RetryLaterError('not due yet', outcome.delayMs)
    return outcome.kind
  }, {
    connection,
    telemetry: new BullMQOtel({ tracerName: 'courier' }),
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WEBHOOK_CONCURRENCY,
    lockDuration: config.WEBHOOK_LOCK_MS,
    stalledInterval: config.WEBHOOK_STALLED_INTERVAL_MS,
    maxStalledCount: 5,
    settings: { backoffStrategy: (_attempts, _type, err) => (err instanceof RetryLaterError ? err.delayMs : 5000) },
  })
  worker.on('error', (err) => app.log.error({ err }, 'webhook worker error'))
  worker.on('failed', (job, err) => {
    if (job && !(err instanceof RetryLaterError)) app.log.warn({ jobId: job.id, err: err.message }, 'webhook job failed')
  })

  observeQueueJobs(queue)
  // Webhook lag (DESIGN 15's SLO: under 60 s), read from Postgres when Prometheus scrapes; every
  // replica reports the same figure, dashboards and alerts take max().
  instruments().meter.createObservableGauge('courier_webhook_lag_seconds', { description: 'Age of the oldest undelivered webhook work that is due (a due delivery attempt or an unrelayed event)' }).addCallback(async (result) => {
    const lag = await readForScrape(() => webhookLagSeconds(sql))
    result.observe(lag ?? UNREAD)
  })

  // The relay runs again at once while it finds a full batch, and otherwise every interval.
  let stopped = false
  let relayTimer: NodeJS.Timeout | undefined
  const relay = async () => {
    let claimed = 0
    try {
      claimed = await relayOnce(sql, queue)
    } catch (err) {
      app.log.warn({ err: errorMessage(err) }, 'webhook relay failed')
    }
    if (!stopped) relayTimer = setTimeout(relay, claimed > 0 ? 0 : config.WEBHOOK_RELAY_INTERVAL_MS)
  }
  relayTimer = setTimeout(relay, 0)

  // Each sweep takes up where the last stopped, and starts over after the newest.
  let sweptTo: DeliverySweepCursor | null = null
  const sweep = repeatWithoutOverlap(SWEEP_EVERY_MS, async () => {
    const purged = await purgeDeleted(sql)
    if (purged > 0) app.log.info({ deliveries: purged }, 'deleted webhook endpoints\' deliveries and log removed')
    const { requeued, next } = await requeueMissing(sql, queue, config.WEBHOOK_REQUEUE_AFTER_S, sweptTo)
    sweptTo = next
    if (requeued.length > 0) app.log.warn({ deliveryIds: requeued }, 're-queued webhook deliveries whose job was missing')
  }, (err) => app.log.warn({ err: errorMessage(err) }, 'webhook sweep failed'))

  app.addHook('onClose', async () => {
    stopped = true
    clearTimeout(relayTimer)
    clearInterval(sweep)
    await worker.close()
    await slots.close()
    await queue.close()
    await dispatcher.close()
    connection.disconnect()
    await sql.end({ timeout: 5 })
  })

  const liveness = watchWorker(worker, queue, config.QUEUE_STUCK_S * 1000)
  await app.register(healthRoutes, { sql, redis: connection, needsRedis: true, taking: liveness.taking })
}

export const startWebhookSender = fp(webhookSender, { name: 'webhook-sender' })
