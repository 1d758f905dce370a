import multipart from '@fastify/multipart'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { CourierFix } from '../../../shared/courier.js'
import { acceptOffer, changeShift, declineOffer, moveOrder, orderHeldBy, ordersHeldBy, pendingOffers, photoTooLarge, reportLocation, type CourierDesk, type CourierMove } from '../../../shared/couriers/actions.js'
import { lastFix, shiftOf } from '../../../shared/couriers/positions.js'
import { findActiveOrderIdsOfCourier, type CourierRow } from '../../../shared/db/couriers.js'
import type { Sql } from '../../../shared/db/sql.js'
import type { DispatchQueue } from '../../../shared/dispatch/queue.js'
import { noticeIdAfter, noticeIdOf, noticesSince, type CourierNoticeMessage } from '../../../shared/couriers/stream.js'
import { courierOrderView } from '../../../shared/dispatch/views.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { errorCode } from '../../../shared/errors/error-message.js'
import { unavailableWithoutRedis, type RedisClient } from '../../../shared/redis.js'
import { declineRequestSchema, deliverRequestSchema, locationRequestSchema, pinGiven, noFieldsRequestSchema, reasonRequestSchema, shiftRequestSchema } from '../../../shared/schemas/courier.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { PHOTO_MAX_BYTES, type PhotoStore } from '../../../shared/storage/photos.js'
import { bearerCourierToken } from '../courier-auth.js'
import type { CourierStreams } from '../courier-streams.js'
import { secretHash } from '../../../shared/secret-hash.js'

interface CourierRouteOptions {
  sql: Sql
  redis: RedisClient
  /** Not `prefix`: fastify would take that for the routes' URL prefix. */
  queuePrefix: string
  dispatch: DispatchQueue
  streams: CourierStreams
  photos: PhotoStore
  publicBaseUrl: string
}

const HEARTBEAT_MS = 15_000
/**
 * What a stream may hold unsent for a courier who stopped reading (a phone gone silent mid-cell,
 * a client that never reads) before it is ended, for the app to reconnect: notices are small, so a
 * reader this far behind is not reading, and the gateway would otherwise buffer for it without end.
 */
const STREAM_BACKLOG_BYTES = 1024 * 1024
/** Told first to a stream whose Last-Event-ID the courier's log no longer holds: read the orders and offers again. */
const RESYNC = 'event: resync\ndata: {}\n\n'
/** The 503 of a stream asked for while this gateway stops. */
export const STREAM_STOPPING = 'This gateway is stopping; reconnect, another instance serves the stream'

/** The courier's side of the API (DESIGN 14): shift, location, offers and the moves of an order they hold. */
export default async function courierRoutes(app: FastifyInstance, { sql, redis, queuePrefix: prefix, dispatch, streams, photos, publicBaseUrl }: CourierRouteOptions) {
  const desk: CourierDesk = { sql, redis, prefix, dispatch, photos, publicBaseUrl, warn: (err, message) => app.log.warn({ err }, message) }
  const profile = (courier: CourierRow) => ({ courier_id: courier.id, name: courier.name, phone: courier.phone, vehicle_type: courier.vehicleType, vehicle_plate: courier.vehiclePlate, max_weight_kg: courier.maxWeightKg })

  app.get('/me', async (request) => {
    const [[shift, fix], active] = await Promise.all([
      Promise.all([shiftOf(redis, prefix, request.courier.id), lastFix(redis, prefix, request.courier.id)]).catch(unavailableWithoutRedis),
      findActiveOrderIdsOfCourier(sql, request.courier.id),
    ])
    return { ...profile(request.courier), shift, location: fix, active_orders: active.map((order) => ({ order_id: order.id, status: order.status })) }
  })

  app.post('/shift', async (request) => {
    const body = parseBody(shiftRequestSchema, request.body ?? {})
    return { shift: await changeShift(desk, request.courier, body.status) }
  })

  // The hot path: one Redis round trip, at most one ping a second per courier.
  app.post('/location', { config: { rateLimit: false } }, async (request, reply) => {
    const body = parseBody(locationRequestSchema, request.body ?? {})
    // Never later than its arrival: a phone whose clock runs ahead would stay "heard from" past
    // COURIER_STALE_S, and show a time not yet come. An earlier time (a fix sent late) stands.
    const now = Date.now()
    const fix: CourierFix = { latitude: body.latitude, longitude: body.longitude, at: new Date(body.at ? Math.min(Date.parse(body.at), now) : now).toISOString() }
    if (await reportLocation(desk, request.courier, fix) === 'too_soon') {
      // DESIGN 2's one 429 message; the gate opens again within the second.
      reply.header('retry-after', '1')
      throw new ApiError(429, 'Too many requests, retry in 1 seconds')
    }
    return reply.code(204).send()
  })

  app.get('/offers', async (request) => ({ data: await pendingOffers(desk, request.courier.id) }))

  // What the courier holds, in full, as the accept answered it: an app that restarts mid-delivery reads it again here.
  app.get('/orders', async (request) => ({ data: (await ordersHeldBy(desk, request.courier.id)).map(courierOrderView) }))
  app.get<{ Params: { order_id: string } }>('/orders/:order_id', async (request) => courierOrderView(await orderHeldBy(desk, request.courier.id, request.params.order_id)))

  // A move that takes no body (pickup, return, accept) still refuses one that is no JSON object.
  const noFields = (request: FastifyRequest) => parseBody(noFieldsRequestSchema, request.body ?? {})

  app.post<{ Params: { offer_id: string } }>('/offers/:offer_id/accept', async (request, reply) => {
    noFields(request)
    return reply.code(200).send(courierOrderView(await acceptOffer(desk, request.courier, request.params.offer_id)))
  })

  app.post<{ Params: { offer_id: string } }>('/offers/:offer_id/decline', async (request, reply) => {
    const body = parseBody(declineRequestSchema, request.body ?? {})
    await declineOffer(desk, request.courier.id, request.params.offer_id, body.reason ?? null)
    return reply.code(204).send()
  })

  // The streams open on this gateway. When it stops (a deploy, a scale-in) they end first, so each
  // courier reconnects to a replica that still tells them of offers: open, they would hold up the
  // stop until it was forced, hearing nothing once the subscriber had gone.
  app.addHook('preClose', (done) => {
    streams.endAll()
    done()
  })

  // Server-Sent Events: offers and withdrawals as they happen, through Redis pub/sub.
  app.get('/stream', { config: { stream: true } }, async (request, reply) => {
    // HEAD gets the stream's headers and ends: it has no body to keep open, and Node sends no
    // headers of a HEAD answer until it ends.
    if (request.method === 'HEAD') return reply.code(200).header('content-type', 'text/event-stream').header('cache-control', 'no-store, no-transform').send()
    // Asked for while the gateway stops (its streams already ended): open, it would hold the stop up until forced.
    if (streams.stopping()) throw new ApiError(503, STREAM_STOPPING)
    reply.hijack()
    const raw = reply.raw
    // The hook admitted a token of the issued shape; its hash lets a revocation end this stream.
    streams.opened(raw, secretHash(bearerCourierToken(request.headers.authorization) ?? ''))
    // x-accel-buffering: an nginx in front (the Ingress of deploy/k8s) passes each event on at once
    // instead of holding it in its proxy buffer, where an offer could sit past its expiry.
    // no-transform: a compressing proxy or CDN would otherwise hold events back to fill its blocks.
    raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no', 'x-request-id': String(request.id) })
    // Whenever the courier hangs up (even while the subscription is being made), nothing is left behind.
    let stop: (() => void) | null = null
    let closed = false
    const write = (text: string) => {
      if (raw.destroyed) return
      if (raw.writableLength > STREAM_BACKLOG_BYTES) {
        request.log.warn({ courierId: request.courier.id, unsent: raw.writableLength }, 'courier stream not read; ended for the app to reconnect')
        raw.destroy()
      } else {
        raw.write(text)
      }
    }
    const heartbeat = setInterval(() => write(': heartbeat\n\n'), HEARTBEAT_MS)
    request.raw.on('close', () => {
      streams.closed(raw)
      closed = true
      clearInterval(heartbeat)
      stop?.()
    })
    // A notice's `id` is its place in the courier's log: the app's EventSource sends the last one
    // back as Last-Event-ID when it reconnects, and is told what it missed. Ids only grow, so one
    // at or before the last sent (replayed from the log, then heard live) is not sent again.
    const missedSince = noticeIdOf(request.headers['last-event-id'])
    let lastSent = missedSince
    const send = ({ event, data, id }: CourierNoticeMessage) => {
      if (id && lastSent && !noticeIdAfter(id, lastSent)) return
      if (id) lastSent = id
      write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    }
    // Notices that come while the pending offers are read wait for them, so a withdrawal always
    // follows the offer it withdraws.
    let held: CourierNoticeMessage[] | null = []
    const unsubscribe = await streams.listen(request.courier.id, (notice) => (held ? held.push(notice) : send(notice))).catch((err: unknown) => {
      // Not subscribed (Redis away): end the stream, so the app reconnects rather than hear heartbeats only.
      request.log.warn({ err }, 'courier stream not subscribed; ended for the app to reconnect')
      raw.end()
      return null
    })
    if (!unsubscribe) return
    if (closed) return unsubscribe()
    stop = unsubscribe
    // The offers already pending first, each as an `offer` event: an app that reconnects (a phone
    // between cells) misses none made while it was away. One made meanwhile may come twice.
    try {
      for (const offer of await pendingOffers(desk, request.courier.id)) send({ event: 'offer', data: offer })
    } catch (err) {
      request.log.warn({ err }, 'pending offers not replayed on the stream; GET /v2/courier/offers lists them')
    }
    // Then what was told since the last notice this app heard (withdrawals, cancels, hand-backs
    // while it was away), and only after it what came while these were read: each notice once.
    // When the log no longer holds that notice (away too long, or too much told), what came in
    // between is not all there: `resync` tells the app to read its orders and offers again.
    if (missedSince) {
      try {
        const missed = await noticesSince(redis, prefix, request.courier.id, missedSince)
        if (!missed.complete) write(RESYNC)
        for (const notice of missed.notices) send(notice)
      } catch (err) {
        request.log.warn({ err }, 'missed notices not replayed on the stream; GET /v2/courier/me and /offers show the truth')
        write(RESYNC)
      }
    }
    for (const notice of held) send(notice)
    held = null
    // Only now: a client that waits for this line misses no notice sent after it.
    write(': connected\n\n')
  })

  const move = (path: string, read: (request: FastifyRequest) => Promise<CourierMove>, on: FastifyInstance = app, mediaTypes?: string) => {
    on.post<{ Params: { order_id: string } }>(`/orders/:order_id/${path}`, { config: { mediaTypes } }, async (request, reply) => {
      const order = await moveOrder(desk, request.courier, request.params.order_id, await read(request))
      return reply.code(200).send(courierOrderView(order))
    })
  }
  const reason = async (request: FastifyRequest) => parseBody(reasonRequestSchema, request.body ?? {}).reason
  move('pickup', async (request) => (noFields(request), { to: 'picked_up' }))
  // `/deliver` also takes multipart/form-data (a PIN and a photo): the parser and its two hooks
  // live in that route's own context, so no other courier request (a location ping above all) runs
  // them, and a multipart body anywhere else is a 415 like any body that is not JSON.
  await app.register(async (delivery) => {
    await delivery.register(multipart, { limits: { fileSize: PHOTO_MAX_BYTES, files: 1, fields: 4, fieldSize: 1024, parts: 5 } })
    move('deliver', readDelivery, delivery, 'application/json or multipart/form-data')
  })
  move('fail', async (request) => ({ to: 'failed', reason: await reason(request) }))
  move('unassign', async (request) => ({ to: 'created', reason: await reason(request) }))
  move('return', async (request) => (noFields(request), { to: 'returned' }))
}

/** A delivery as JSON `{ pin }` or multipart/form-data (`pin`, `photo`): the PIN and the photo's bytes. */
async function readDelivery(request: FastifyRequest): Promise<CourierMove> {
  if (!request.isMultipart()) return { to: 'delivered', pin: pinGiven(parseBody(deliverRequestSchema, request.body ?? {}).pin), photo: null }
  const fields: Record<string, string> = {}
  let photo: Buffer | null = null
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'photo' || photo) throw new ApiError(400, 'the only file a delivery takes is one photo')
        photo = await part.toBuffer()
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value
      }
    }
  } catch (err) {
    throw multipartRefusal(err)
  }
  return { to: 'delivered', pin: pinGiven(parseBody(deliverRequestSchema, fields).pin), photo }
}

/** A multipart body @fastify/multipart refused, as the spec's error body. */
function multipartRefusal(err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (errorCode(err) === 'FST_REQ_FILE_TOO_LARGE') return photoTooLarge()
  return new ApiError(400, 'body must be multipart/form-data with a pin and one photo (JPEG or PNG)')
}
