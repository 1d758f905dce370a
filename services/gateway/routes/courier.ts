import type { FastifyInstance } from 'fastify'
import type { CourierFix, OrderStatus } from '../../../shared/courier.js'
import { lastFix, recordPing, setShift, shiftOf } from '../../../shared/couriers/positions.js'
import { tellCouriers } from '../../../shared/couriers/stream.js'
import { findActiveOrderIdsOfCourier, type CourierRow } from '../../../shared/db/couriers.js'
import { closeOffer, findOffer, findPendingOffersOfCourier } from '../../../shared/db/offers.js'
import { findOrderById } from '../../../shared/db/orders.js'
import { appendTrailPoint } from '../../../shared/db/trails.js'
import type { Sql } from '../../../shared/db/sql.js'
import type { DispatchQueue } from '../../../shared/dispatch/queue.js'
import { courierOnOrder, courierOrderView, offerView } from '../../../shared/dispatch/views.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isOfferId, isOrderId } from '../../../shared/ids.js'
import { changeOrder, type OrderChangeOutcome } from '../../../shared/orders/change.js'
import type { RedisClient } from '../../../shared/redis.js'
import { declineRequestSchema, deliverRequestSchema, locationRequestSchema, reasonRequestSchema, shiftRequestSchema } from '../../../shared/schemas/courier.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { instruments } from '../../../shared/telemetry/metrics.js'
import { continuingTrace, inSpan } from '../../../shared/telemetry/tracing.js'
import type { CourierStreams } from '../courier-streams.js'
import { orderChangeRefusal, orderNotFound } from '../order-answer.js'

interface CourierRouteOptions {
  sql: Sql
  redis: RedisClient
  /** Not `prefix`: fastify would take that for the routes' URL prefix. */
  queuePrefix: string
  dispatch: DispatchQueue
  streams: CourierStreams
}

const HEARTBEAT_MS = 15_000
/** An order's trail is kept to this many points: 8 hours at one point per 30 s. */
const TRAIL_MAX_POINTS = 960

/** The courier's side of the API (DESIGN 14): shift, location, offers and the moves of an order they hold. */
export default async function courierRoutes(app: FastifyInstance, { sql, redis, queuePrefix: prefix, dispatch, streams }: CourierRouteOptions) {
  const profile = (courier: CourierRow) => ({ courier_id: courier.id, name: courier.name, phone: courier.phone, vehicle_type: courier.vehicleType, vehicle_plate: courier.vehiclePlate, max_weight_kg: courier.maxWeightKg })

  app.get('/me', async (request) => {
    const [shift, fix, active] = await Promise.all([shiftOf(redis, prefix, request.courier.id), lastFix(redis, prefix, request.courier.id), findActiveOrderIdsOfCourier(sql, request.courier.id)])
    return { ...profile(request.courier), shift, location: fix, active_orders: active.map((order) => ({ order_id: order.id, status: order.status })) }
  })

  app.post('/shift', async (request) => {
    const body = parseBody(shiftRequestSchema, request.body ?? {})
    const shift = body.status === 'available' ? 'available' : 'offline'
    // On the map now (a fix already known): the orders waiting near them are looked at now; without
    // a fix, their first ping does it.
    const { joined } = await setShift(redis, prefix, request.courier.id, shift)
    if (joined) await dispatch.courierFree(request.courier.id)
    return { shift }
  })

  // The hot path: one Redis round trip, at most one ping a second per courier.
  app.post('/location', { config: { rateLimit: false } }, async (request, reply) => {
    const body = parseBody(locationRequestSchema, request.body ?? {})
    const fix: CourierFix = { latitude: body.latitude, longitude: body.longitude, at: body.at ? new Date(body.at).toISOString() : new Date().toISOString() }
    const ping = await recordPing(redis, prefix, request.courier.id, fix)
    if (ping.kind === 'too_soon') {
      reply.header('retry-after', '1')
      throw new ApiError(429, 'Too many location updates, at most one a second')
    }
    // The trail costs at most one Postgres statement per courier per TRAIL_EVERY_S, whatever the ping rate.
    if (ping.trailDue) await appendTrailPoint(sql, request.courier.id, fix, TRAIL_MAX_POINTS)
    // On shift and now on the map (their first fix): the orders waiting near them are looked at now.
    if (ping.joined) await dispatch.courierFree(request.courier.id)
    instruments().locationUpdates.add(1)
    return reply.code(204).send()
  })

  app.get('/offers', async (request) => {
    const offers = await findPendingOffersOfCourier(sql, request.courier.id)
    const shown = []
    for (const offer of offers) {
      const order = await findOrderById(sql, offer.orderId)
      if (order?.status === 'created') shown.push(offerView(offer, order, null))
    }
    return { data: shown }
  })

  app.post<{ Params: { offer_id: string } }>('/offers/:offer_id/accept', async (request, reply) => {
    const offer = await ownOffer(request.params.offer_id, request.courier.id)
    const courier = request.courier
    const location = await lastFix(redis, prefix, courier.id)
    // The assignment continues the trace that made the offer: placement → dispatch → offer → accept.
    const outcome = await continuingTrace(offer.traceparent, () => inSpan('courier.accept', { 'courier.order_id': offer.orderId }, () =>
      changeOrder(sql, { orderId: offer.orderId, scope: null }, {
        kind: 'advance', to: 'assigned', reason: null, offer: { id: offer.id, courierId: courier.id }, location, courier: courierOnOrder(courier),
      })))
    if (outcome.kind === 'changed') {
      await dispatch.offerSettled(offer.id)
      const metrics = instruments()
      metrics.dispatchOffers.add(1, { outcome: 'accepted' })
      const order = await findOrderById(sql, offer.orderId)
      const since = order?.history.filter((entry) => entry.status === 'created').at(-1)?.at
      if (since) metrics.timeToAssign.record((Date.now() - Date.parse(since)) / 1000)
      return reply.code(200).send(order && courierOrderView(order))
    }
    throw refusal(outcome, offer.orderId)
  })

  app.post<{ Params: { offer_id: string } }>('/offers/:offer_id/decline', async (request, reply) => {
    const body = parseBody(declineRequestSchema, request.body ?? {})
    const offer = await ownOffer(request.params.offer_id, request.courier.id)
    const declined = await closeOffer(sql, offer.id, 'declined', body.reason ?? null)
    if (!declined) throw new ApiError(409, `Offer ${offer.id} ${offer.status === 'expired' ? 'has expired' : 'was withdrawn'}`)
    instruments().dispatchOffers.add(1, { outcome: 'declined' })
    await dispatch.offerSettled(offer.id)
    // The order goes on to its next courier; the courier, free of it, may take another waiting nearby.
    await dispatch.offer([offer.orderId])
    await dispatch.courierFree(request.courier.id)
    return reply.code(204).send()
  })

  // Server-Sent Events: offers and withdrawals as they happen, through Redis pub/sub.
  app.get('/stream', async (request, reply) => {
    reply.hijack()
    const raw = reply.raw
    raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-request-id': String(request.id) })
    // Whenever the courier hangs up (even while the subscription is being made), nothing is left behind.
    let stop: (() => void) | null = null
    let closed = false
    const heartbeat = setInterval(() => raw.write(': heartbeat\n\n'), HEARTBEAT_MS)
    request.raw.on('close', () => {
      closed = true
      clearInterval(heartbeat)
      stop?.()
    })
    const unsubscribe = await streams.listen(request.courier.id, (message) => {
      const parsed: unknown = JSON.parse(message)
      const event = typeof parsed === 'object' && parsed !== null && 'event' in parsed && typeof parsed.event === 'string' ? parsed.event : 'message'
      const data = typeof parsed === 'object' && parsed !== null && 'data' in parsed ? parsed.data : null
      raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    })
    if (closed) return unsubscribe()
    stop = unsubscribe
    // Only now: a client that waits for this line misses no notice sent after it.
    raw.write(': connected\n\n')
  })

  const move = (path: string, to: OrderStatus, schema: typeof reasonRequestSchema | typeof deliverRequestSchema | null) => {
    app.post<{ Params: { order_id: string } }>(`/orders/:order_id/${path}`, async (request, reply) => {
      const body = schema ? parseBody(schema, request.body ?? {}) : {}
      const { order_id: orderId } = request.params
      if (!isOrderId(orderId)) throw orderNotFound(orderId)
      const reason = 'reason' in body && typeof body.reason === 'string' ? body.reason : null
      // A delivery carries the PIN the recipient gave (checked when the order has one).
      const pin = to === 'delivered' ? { pin: 'pin' in body && typeof body.pin === 'string' ? body.pin : null } : {}
      const outcome = await changeOrder(sql, { orderId, scope: { courierId: request.courier.id } }, { kind: 'advance', to, courier: null, reason, location: await lastFix(redis, prefix, request.courier.id), ...pin })
      if (outcome.kind !== 'changed') throw refusal(outcome, orderId)
      await tellCouriers(redis, prefix, outcome.notices, (err) => request.log.warn({ err }, 'courier notice lost'))
      // Handed back: dispatch offers it to the next courier. Free again: orders waiting near them are looked at now.
      if (to === 'created') await dispatch.offer([orderId])
      if (to === 'created' || to === 'delivered' || to === 'returned') await dispatch.courierFree(request.courier.id)
      const order = await findOrderById(sql, orderId)
      return reply.code(200).send(order && courierOrderView(order))
    })
  }
  move('pickup', 'picked_up', null)
  move('deliver', 'delivered', deliverRequestSchema)
  move('fail', 'failed', reasonRequestSchema)
  move('unassign', 'created', reasonRequestSchema)
  move('return', 'returned', null)

  /** The courier's own offer, or the 404 another courier's (or no) offer gets. */
  async function ownOffer(offerId: string, courierId: string) {
    const offer = isOfferId(offerId) ? await findOffer(sql, offerId) : null
    if (!offer || offer.courierId !== courierId) throw new ApiError(404, `Offer ${offerId} was not found`)
    return offer
  }
}

/** A courier's move the order refused, as the spec's error body. */
function refusal(outcome: Exclude<OrderChangeOutcome, { kind: 'changed' }>, orderId: string): ApiError {
  // Only a cancel can find its order already where it was going; a courier never cancels.
  if (outcome.kind === 'unchanged') return new ApiError(409, `${orderId} is already ${String(outcome.order.status)}`)
  return orderChangeRefusal(outcome)
}
