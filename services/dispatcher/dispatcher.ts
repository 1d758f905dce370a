import { DelayedError, Queue, Worker } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { DispatcherConfig } from '../../shared/config.js'
import { COURIER_VEHICLE_TYPES } from '../../shared/courier.js'
import { countAvailable, dropSilentCouriers, lastFix, shiftOf } from '../../shared/couriers/positions.js'
import { tellCourier } from '../../shared/couriers/stream.js'
import { handBackFromDisabled } from '../../shared/couriers/accounts.js'
import { findOrdersOfDisabledCouriers, findOrdersWithoutOffer, findWaitingOrdersNear, ordersWaitingForCourier, type SweepCursor } from '../../shared/db/dispatch-sweep.js'
import { findCourier } from '../../shared/db/couriers.js'
import { expireDueOffers, expireOfferIfDue, type Offer } from '../../shared/db/offers.js'
import { createSql } from '../../shared/db/sql.js'
import { offerNext, type DispatchSettings } from '../../shared/dispatch/dispatch.js'
import { DISPATCH_QUEUE, expireJob, lookNow, offerJob, spread, type DispatchJob, type Rounds } from '../../shared/dispatch/queue.js'
import healthRoutes from '../../shared/http/health.js'
import { observeQueueJobs, watchWorker } from '../../shared/queue-liveness.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { createRedis } from '../../shared/redis.js'
import { repeatWithoutOverlap } from '../../shared/repeat.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { instruments } from '../../shared/telemetry/metrics.js'
import { readForScrape, UNREAD } from '../../shared/telemetry/scrape-read.js'
import { inSpan } from '../../shared/telemetry/tracing.js'

// The sweep: how often it looks for orders whose job was lost, and offers whose expiry job was.
const SWEEP_MS = 5000
/** How old an order without a job must be before the sweep queues one: past its placement's own enqueue. */
const SWEEP_GRACE_S = 2
/** Orders without an offer a sweep queues again, oldest first from where the last sweep stopped. */
const SWEEP_PAGE = 200
/** Who the audit trail names for a hand-back the sweep finishes for an operator's disable. */
const SWEEP_ACTOR = 'dispatcher sweep'
/** Silent couriers taken out of the dispatch set per sweep: a thousand every 5 s clears any backlog soon. */
const SILENT_PER_SWEEP = 1000
/**
 * The orders of one `offers` job looked at together. Few: one placement's orders mostly share a
 * pickup, so they would reach for the same nearest couriers and each but one lose the race.
 */
const OFFERS_AT_ONCE = 4

/** When an order nobody can take now is looked at again, and the dispatch rounds it keeps. */
interface Retry {
  retryAt: number
  rounds: Rounds
}

/**
 * The dispatcher (DESIGN 14) as a plugin of its health server: a BullMQ worker on the `dispatch`
 * queue. An `offer` job offers one order to its next courier, an `offers` job each order of a
 * placement; an `expire` job closes an offer whose time is up and moves on to the next. Rows are
 * the truth: a lost job is found by the sweep.
 */
async function dispatcher(app: FastifyInstance, { config }: { config: DispatcherConfig }) {
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  const sql = createSql(config, { max: Math.max(config.DATABASE_POOL_MAX, config.DISPATCHER_CONCURRENCY + 2), timeouts: config })
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  connection.on('error', (err) => app.log.warn({ err: err.message }, 'redis connection error'))
  const redis = createRedis(config, { maxRetriesPerRequest: 1, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
  redis.on('error', (err) => app.log.debug({ err: err.message }, 'redis connection error (positions)'))
  const telemetry = new BullMQOtel({ tracerName: 'courier' })
  const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: config.QUEUE_PREFIX, telemetry })
  const prefix = config.QUEUE_PREFIX
  const settings: DispatchSettings = {
    radiusKm: config.DISPATCH_RADIUS_KM, offerS: config.DISPATCH_OFFER_S, maxOffers: config.DISPATCH_MAX_OFFERS,
    retryS: config.DISPATCH_RETRY_S, capacity: config.COURIER_CAPACITY, staleS: config.COURIER_STALE_S,
  }
  const metrics = instruments()

  /**
   * Offers the order to its next courier. When nobody can take it now (everyone in range asked,
   * busy or unable to carry it, or the round's cap reached): when to look again, and the rounds to
   * keep. The retry starts a new round at `next_round` (DESIGN 14: the order "waits and starts
   * again"), so a courier who declined may be asked again; an order woken before then (a courier
   * came free) goes on with its round, so whoever was asked in it stays asked until the retry.
   */
  async function offer(orderId: string, rounds: Rounds): Promise<Retry | null> {
    const now = Date.now()
    const next = rounds.next_round === undefined ? null : Date.parse(rounds.next_round)
    const round = next !== null && next <= now ? rounds.next_round : rounds.round
    const pending = next !== null && next > now ? next : null
    const step = await inSpan('dispatch.offer', { 'courier.order_id': orderId }, async (span) => {
      const step = await offerNext(sql, redis, prefix, settings, orderId, round === undefined ? null : new Date(round))
      span.setAttribute('courier.outcome', step.kind)
      return step
    })
    if (step.kind === 'offered') {
      metrics.dispatchOffers.add(1, { outcome: 'offered' })
      await queue.add(...spread(expireJob(step.offer.id, orderId, step.offer.expiresAt.getTime() - Date.now())))
      await tellCourier(redis, prefix, { courierId: step.courierId, event: 'offer', data: step.view })
      return null
    }
    if (step.kind === 'not_needed') return null
    metrics.dispatchOffers.add(1, { outcome: 'nobody' })
    // Look again at the retry, with a new round, or sooner when a courier comes free.
    const retryAt = pending ?? now + settings.retryS * 1000
    const kept: Rounds = round === undefined ? {} : { round }
    return { retryAt, rounds: { ...kept, next_round: new Date(retryAt).toISOString() } }
  }

  /** An order nobody could take, looked at outside its own `offer` job: that job, delayed to the retry, with the rounds to keep. */
  function waitForRetry(orderId: string, retry: Retry) {
    return queue.add(...spread(offerJob(orderId, retry.retryAt - Date.now(), retry.rounds)))
  }

  /**
   * One placement's orders, each offered as its own `offer` job would be. An order nobody can take
   * now gets its own `offer` job, delayed to its retry; one whose look failed gets one at once, to
   * be retried as any; one whose job cannot be queued is left to the sweep. The job itself never
   * fails for one order, so a retry never looks at the others again.
   */
  async function offerEach(orderIds: string[]): Promise<void> {
    const waiting = [...orderIds]
    const lookAtNext = async (): Promise<void> => {
      for (let orderId = waiting.shift(); orderId !== undefined; orderId = waiting.shift()) {
        const retry = await offer(orderId, {}).catch((err: unknown) => {
          app.log.warn({ orderId, err: errorMessage(err) }, 'dispatch look failed; the order gets a job of its own')
          return { retryAt: Date.now(), rounds: {} }
        })
        if (retry) await waitForRetry(orderId, retry).catch((err: unknown) => app.log.warn({ orderId, err: errorMessage(err) }, 'dispatch left to the sweep'))
      }
    }
    await Promise.all(Array.from({ length: OFFERS_AT_ONCE }, lookAtNext))
  }

  /** An offer closed `expired` (by its job or by the sweep): counted, and its courier told. */
  async function announceExpired(expired: Offer): Promise<void> {
    metrics.dispatchOffers.add(1, { outcome: 'expired' })
    await tellCourier(redis, prefix, { courierId: expired.courierId, event: 'offer_withdrawn', data: { offer_id: expired.id, order_id: expired.orderId, reason: 'expired' } })
  }

  /** An offer whose time is up: closed, and the order offered to its next courier. */
  async function expire(offerId: string, orderId: string): Promise<void> {
    const expired = await expireOfferIfDue(sql, offerId)
    if (!expired) return
    await announceExpired(expired)
    const retry = await offer(orderId, {})
    if (retry) await waitForRetry(orderId, retry)
  }

  /**
   * A courier can take an order now: the oldest orders waiting near them that they may carry are
   * looked at now, not at their next retry (older ones for another vehicle do not crowd them out).
   */
  async function wake(courierId: string): Promise<void> {
    // The cheap questions first: a wave of couriers coming on shift where nothing waits costs
    // two Redis reads and two indexed queries each.
    const [fix, shift] = await Promise.all([lastFix(redis, prefix, courierId), shiftOf(redis, prefix, courierId)])
    if (!fix || shift !== 'available') return
    const courier = await findCourier(sql, courierId)
    if (!courier || courier.disabledAt) return
    for (const orderId of await findWaitingOrdersNear(sql, { lat: fix.latitude, lng: fix.longitude }, settings.radiusKm, courier, settings.capacity * 2)) {
      await lookNow(queue, orderId)
    }
  }

  const worker = new Worker<DispatchJob, void>(DISPATCH_QUEUE, async (job, token) => {
    const data = job.data
    if (data.kind === 'expire') return expire(data.offer_id, data.order_id)
    if (data.kind === 'free') return wake(data.courier_id)
    if (data.kind === 'offers') return offerEach(data.order_ids)
    const retry = await offer(data.order_id, data)
    if (!retry || !token) return
    // The same job waits and runs again: its id stays taken, so the sweep cannot queue a twin.
    await job.updateData({ kind: 'offer', order_id: data.order_id, ...retry.rounds })
    await job.moveToDelayed(retry.retryAt, token)
    throw new DelayedError()
  }, { connection, prefix, telemetry, concurrency: config.DISPATCHER_CONCURRENCY, maxStalledCount: 3, lockDuration: config.DISPATCHER_LOCK_MS, stalledInterval: config.DISPATCHER_STALLED_INTERVAL_MS })
  worker.on('error', (err) => app.log.error({ err }, 'dispatcher error'))
  worker.on('failed', (job, err) => app.log.warn({ jobId: job?.id, attempt: job?.attemptsMade, err: err.message }, 'dispatch attempt failed'))

  // Offers whose expiry job was lost, and orders whose offer job was: the rows say what to do.
  let sweptTo: SweepCursor | null = null
  // Couriers gone silent without going off shift leave the dispatch set (their next ping brings them back).
  const sweep = repeatWithoutOverlap(SWEEP_MS, async () => {
    await dropSilentCouriers(redis, prefix, settings.staleS, SILENT_PER_SWEEP)
    for (const expired of await expireDueOffers(sql, 100)) {
      await announceExpired(expired)
      await queue.add(...spread(offerJob(expired.orderId)))
    }
    // Orders a disable left with its courier (their token is refused, so nobody would deliver them).
    // One that fails (its lock held past its bound) is left to the next sweep, and holds up no other step.
    for (const left of await findOrdersOfDisabledCouriers(sql, SWEEP_PAGE)) {
      const outcome = await handBackFromDisabled(sql, SWEEP_ACTOR, left.id, left.courierId).catch((err: unknown) => {
        app.log.warn({ orderId: left.id, err: errorMessage(err) }, 'hand-back from a disabled courier failed; the next sweep tries again')
        return null
      })
      if (outcome?.kind === 'changed') await lookNow(queue, left.id)
    }
    // A job still waiting or delayed under the order's job id absorbs the add, so a short grace is safe:
    // an order handed back by an operator or a disabled courier is offered within seconds.
    // A page a sweep, each taking up where the last stopped and starting over after the newest.
    const waiting = await findOrdersWithoutOffer(sql, SWEEP_GRACE_S, settings.retryS, SWEEP_PAGE, sweptTo)
    sweptTo = waiting.length === SWEEP_PAGE ? (waiting.at(-1) ?? null) : null
    if (waiting.length > 0) await queue.addBulk(waiting.map(({ id }) => offerJob(id)))
  }, (err) => app.log.warn({ err }, 'dispatch sweep failed'))

  // One query for both gauges. The oldest wait shows the order nobody ever takes (no courier of its
  // vehicle comes near), which time to assign, recorded at an accept, never sees.
  const waitingGauge = metrics.meter.createObservableGauge('courier_orders_waiting_for_courier', { description: 'Live orders created and not yet assigned' })
  const oldestGauge = metrics.meter.createObservableGauge('courier_order_wait_oldest_seconds', { description: 'How long the live order waiting longest for a courier has waited since it last became created; 0 when none waits' })
  metrics.meter.addBatchObservableCallback(async (result) => {
    const waiting = await readForScrape(() => ordersWaitingForCourier(sql))
    result.observe(waitingGauge, waiting?.count ?? UNREAD)
    result.observe(oldestGauge, waiting?.oldestS ?? UNREAD)
  }, [waitingGauge, oldestGauge])
  observeQueueJobs(queue)
  // One series per vehicle, as dispatch searches them: a truck order waits on the trucks alone.
  metrics.meter.createObservableGauge('courier_couriers_available', { description: 'Couriers on shift and heard from within COURIER_STALE_S (the dispatch sets), by vehicle' }).addCallback(async (result) => {
    const counts = await readForScrape(() => countAvailable(redis, prefix))
    for (const vehicle of COURIER_VEHICLE_TYPES) result.observe(counts === null ? UNREAD : counts.get(vehicle) ?? 0, { vehicle })
  })

  app.addHook('onClose', async () => {
    clearInterval(sweep)
    await worker.close()
    await queue.close()
    connection.disconnect()
    redis.disconnect()
    await sql.end({ timeout: 5 })
  })
  const liveness = watchWorker(worker, queue, config.QUEUE_STUCK_S * 1000)
  await app.register(healthRoutes, { sql, redis: connection, needsRedis: true, taking: liveness.taking })
}

export const startDispatcher = fp(dispatcher, { name: 'dispatcher' })
