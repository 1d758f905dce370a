import { connect } from 'node:net'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import gatewayApp from '../../../services/gateway/app.js'
import { gatewayServerOptions } from '../../../services/gateway/server-options.js'
import { createCourierStreams } from '../../../services/gateway/courier-streams.js'
import { gatewayEnv, loadConfig } from '../../../shared/config.js'
import { disableCourierAndAnnounce } from '../../../shared/couriers/accounts.js'
import { courierChannel, tellCourier } from '../../../shared/couriers/stream.js'
import { publishInvalidation } from '../../../shared/invalidation.js'
import { createRedis, type RedisClient } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { kmNorth, onShift, pendingOffer, placeOrders } from '../../helpers/couriers.js'
import { startOwnRedis, waitFor, waitForValue } from '../../helpers/processes.js'
import { IKEJA, ISLAND, LEKKI, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { holdLock, lockWaiters } from '../../helpers/db.js'
import { STREAM_STOPPING } from '../../../services/gateway/routes/courier.js'
import { ConsoleClient, consoleUser, startConsole } from '../../helpers/console.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'

// The courier's Server-Sent Events (DESIGN 14, 17.2) through a gateway listening on a real port
// and read by a real HTTP client: `offer` when dispatch offers an order, `offer_withdrawn` when the
// business cancels it first, `order_cancelled` when it cancels an order the courier holds.
const WAIT_MS = 15_000
const { db, gateway } = await startStack(t, { dispatcher: true, env: { DISPATCH_OFFER_S: '60' } })
await gateway.listen({ port: 0, host: '127.0.0.1' })
const address = gateway.server.address()
const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
const account = await seedAccount(db.sql, { balance: 1_000_000 })
const redis = createRedis(db.config, { maxRetriesPerRequest: 1 })
t.teardown(() => redis.disconnect())

interface StreamEvent {
  event: string
  data: Record<string, unknown>
  /** The notice's place in the courier's log, if it has one. */
  id?: string
}

/** Opens the courier's stream and collects its events and comments until `close` (or the gateway ends it: `ended`). */
async function openStream(token: string, from = base, lastEventId?: string) {
  const controller = new AbortController()
  const resume: Record<string, string> = lastEventId ? { 'last-event-id': lastEventId } : {}
  const response = await fetch(`${from}/v2/courier/stream`, { headers: { ...bearer(token), accept: 'text/event-stream', ...resume }, signal: controller.signal })
  const events: StreamEvent[] = []
  const comments: string[] = []
  const state = { ended: false }
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  const pump = (async () => {
    let buffer = ''
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) {
          state.ended = true
          return
        }
        buffer += value
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const lines = buffer.slice(0, end).split('\n')
          buffer = buffer.slice(end + 2)
          comments.push(...lines.filter((line) => line.startsWith(':')).map((line) => line.slice(1).trim()))
          const event = lines.find((line) => line.startsWith('event: '))?.slice(7)
          const data = lines.find((line) => line.startsWith('data: '))?.slice(6)
          const id = lines.find((line) => line.startsWith('id: '))?.slice(4)
          if (event) events.push({ event, data: data ? JSON.parse(data) : null, ...(id ? { id } : {}) })
        }
      }
    } catch {
      // Aborted by close().
    }
  })()
  return {
    response, events, comments, state,
    /** Waits for the `connected` comment: from then on the stream hears every notice. */
    connected: () => waitForValue(async () => comments, (seen) => seen.includes('connected'), WAIT_MS, 20),
    /** Waits for an event of this name about the order. */
    next: (event: string, orderId: string) => waitForValue(async () => events.find((seen) => seen.event === event && seen.data?.order_id === orderId), (found) => found !== undefined, WAIT_MS, 20),
    close: async () => {
      controller.abort()
      await pump
    },
  }
}

/**
 * Tells the courier a notice and waits for `stream` to show it: proof the stream is still open
 * and listening, where a look at `ended` the moment another stream ended would not yet see it
 * wrongly closed. Told again until it arrives, as a channel being subscribed again may miss one.
 */
async function stillHears(stream: Awaited<ReturnType<typeof openStream>>, publisher: RedisClient, courierId: string, orderId: string) {
  const heard = () => stream.events.find((seen) => seen.event === 'order_cancelled' && seen.data?.order_id === orderId)
  return waitForValue(async () => {
    if (!heard()) await tellCourier(publisher, db.config.QUEUE_PREFIX, { courierId, event: 'order_cancelled', data: { order_id: orderId } })
    return heard()
  }, (found) => found !== undefined, WAIT_MS, 100)
}

t.test('the stream needs a courier token', async (t) => {
  const anonymous = await fetch(`${base}/v2/courier/stream`)
  t.equal(anonymous.status, 401)
  t.match(await anonymous.json(), { statusCode: 401, message: 'Invalid courier token', path: '/v2/courier/stream' })
  const business = await fetch(`${base}/v2/courier/stream`, { headers: bearer(account.apiKey) })
  t.equal(business.status, 401, 'a business key is no courier token')
  await business.body?.cancel()
})

t.test('HEAD answers the stream\'s headers at once and ends', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Head rider', kmNorth(ISLAND, 3))
  const head = await fetch(`${base}/v2/courier/stream`, { method: 'HEAD', headers: bearer(rider.token), signal: AbortSignal.timeout(WAIT_MS) })
  t.equal(head.status, 200)
  t.match(head.headers.get('content-type'), /^text\/event-stream/)
  t.equal(await head.text(), '', 'no body')
  await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: bearer(rider.token), payload: { status: 'offline' } })
})

t.test('offer, then offer_withdrawn when the business cancels the offered order, then order_cancelled for an order the courier holds', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Streamer', kmNorth(ISLAND, 0.3))
  const stream = await openStream(rider.token)
  t.teardown(stream.close)
  t.equal(stream.response.status, 200)
  t.match(stream.response.headers.get('content-type'), /^text\/event-stream/)
  t.equal(stream.response.headers.get('x-accel-buffering'), 'no', 'an nginx in front passes each event on at once')
  t.equal(stream.response.headers.get('cache-control'), 'no-store, no-transform', 'nor does a compressing proxy hold events back')
  const connected = await stream.connected()
  t.ok(connected.held, 'the stream says it is connected')
  // Connected means listening: a notice published from now on reaches this courier.
  const [, subscribers] = (await redis.pubsub('NUMSUB', courierChannel(db.config.QUEUE_PREFIX, rider.id))) as [string, number]
  t.equal(Number(subscribers), 1, 'the gateway is subscribed to the courier\'s channel once it says connected')

  const [first] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await stream.next('offer', first!)
  t.ok(offered.held, 'an offer event arrives when the order is offered')
  const offer = await pendingOffer(db.sql, first!)
  t.match(offered.value?.data, { offer_id: offer?.id, order_id: first, pickup: { latitude: ISLAND.lat, longitude: ISLAND.lng }, expires_at: String })
  t.notOk(JSON.stringify(offered.value?.data).includes('Chidi'), 'an offer never names the recipient')
  t.notOk('price' in (offered.value?.data ?? {}), 'nor shows the price')

  t.equal((await fetch(`${base}/v2/business/orders/${first}/cancel`, { method: 'POST', headers: bearer(account.apiKey) })).status, 200)
  const withdrawn = await stream.next('offer_withdrawn', first!)
  t.ok(withdrawn.held, 'cancelling the offered order withdraws the offer on the stream')
  t.same(withdrawn.value?.data, { offer_id: offer?.id, order_id: first, reason: 'cancelled' }, 'saying why, as an expiry does')

  const [second] = await placeOrders(gateway, account.apiKey, [shipment()])
  const again = await stream.next('offer', second!)
  t.ok(again.held)
  const accepted = await fetch(`${base}/v2/courier/offers/${String(again.value?.data.offer_id)}/accept`, { method: 'POST', headers: bearer(rider.token) })
  t.equal(accepted.status, 200)
  await accepted.body?.cancel()
  t.equal((await fetch(`${base}/v2/business/orders/${second}/cancel`, { method: 'POST', headers: bearer(account.apiKey) })).status, 200)
  const cancelled = await stream.next('order_cancelled', second!)
  t.ok(cancelled.held, 'cancelling an order the courier holds tells the courier')
  t.same(stream.events.map((event) => `${event.event} ${String(event.data.order_id)}`), [`offer ${first}`, `offer_withdrawn ${first}`, `offer ${second}`, `order_cancelled ${second}`], 'and nothing else was sent')
  await stream.close()
  // Closed by the courier: the gateway lets go of the channel.
  const released = await waitForValue(async () => Number(((await redis.pubsub('NUMSUB', courierChannel(db.config.QUEUE_PREFIX, rider.id))) as [string, number])[1]), (count) => count === 0, WAIT_MS, 20)
  t.equal(released.value, 0, 'the channel is unsubscribed when the stream ends')
})

t.test('a notice the gateway cannot read is dropped; the stream and the gateway go on', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Garbled', kmNorth(ISLAND, 5))
  const stream = await openStream(rider.token)
  t.teardown(stream.close)
  t.ok((await stream.connected()).held)
  const channel = courierChannel(db.config.QUEUE_PREFIX, rider.id)
  // Garbled, another version's event, and a known event without its data: none is a notice.
  for (const message of ['not json', '{"event":"offer_renewed","data":{"order_id":"ORD-X"}}', '{"event":"offer"}']) await redis.publish(channel, message)
  await tellCourier(redis, db.config.QUEUE_PREFIX, { courierId: rider.id, event: 'offer_withdrawn', data: { offer_id: 'off_0000000000000000', order_id: 'ORD-0000000000', reason: 'expired' } })
  const withdrawn = await stream.next('offer_withdrawn', 'ORD-0000000000')
  t.ok(withdrawn.held, 'the notice after them arrives')
  t.same(stream.events.map((event) => event.event), ['offer_withdrawn'], 'and only it: nothing unreadable was passed on')
  const me = await fetch(`${base}/v2/courier/me`, { headers: bearer(rider.token) })
  t.equal(me.status, 200, 'the gateway still answers')
  await me.body?.cancel()
})

t.test('a stream that reconnects with Last-Event-ID is told first what it missed, each notice once', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Between cells', kmNorth(ISLAND, 5))
  const tell = (orderId: string, event: 'order_cancelled' | 'order_unassigned' = 'order_cancelled') =>
    tellCourier(redis, db.config.QUEUE_PREFIX, { courierId: rider.id, event, data: { order_id: orderId } })
  const first = await openStream(rider.token)
  t.ok((await first.connected()).held)
  await tell('ORD-0000000001')
  const heard = await first.next('order_cancelled', 'ORD-0000000001')
  t.match(heard.value?.id, /^\d+-\d+$/, 'each notice carries its place in the courier\'s log')
  await first.close()

  // While the phone is away: two notices nobody hears.
  await tell('ORD-0000000002')
  await tell('ORD-0000000003', 'order_unassigned')
  const again = await openStream(rider.token, base, heard.value?.id)
  t.teardown(again.close)
  t.ok((await again.connected()).held)
  t.same(again.events.map((event) => `${event.event} ${String(event.data.order_id)}`), ['order_cancelled ORD-0000000002', 'order_unassigned ORD-0000000003'], 'what it missed, in order, before connected: not what it had heard')
  await tell('ORD-0000000004')
  t.ok((await again.next('order_cancelled', 'ORD-0000000004')).held, 'and then what comes, live')
  t.equal(again.events.length, 3, 'each once')

  // Away longer than the log keeps (or from a place it never held): told to read everything again.
  const stale = await openStream(rider.token, base, '1-0')
  t.teardown(stale.close)
  t.ok((await stale.connected()).held)
  t.same(stale.events.map((event) => event.event), ['resync', 'order_cancelled', 'order_cancelled', 'order_unassigned', 'order_cancelled'], 'resync first, then what the log still holds')

  const fresh = await openStream(rider.token, base, 'not-an-id')
  t.teardown(fresh.close)
  t.ok((await fresh.connected()).held)
  t.same(fresh.events, [], 'without a place it gave (none, or one it never gave), a stream starts from now')
})

t.test('a courier who stops reading is ended once STREAM_BACKLOG_BYTES wait unsent, not buffered for without end', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Never reads', kmNorth(ISLAND, 5))
  const channel = courierChannel(db.config.QUEUE_PREFIX, rider.id)
  const subscribers = async () => Number(((await redis.pubsub('NUMSUB', channel)) as [string, number])[1])
  // A client that sends the request and then never reads a byte (a phone gone silent mid-cell).
  const { port } = new URL(base)
  const socket = connect({ host: '127.0.0.1', port: Number(port) })
  t.teardown(() => socket.destroy())
  socket.write(`GET /v2/courier/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${rider.token}\r\nAccept: text/event-stream\r\n\r\n`)
  socket.pause()
  t.equal((await waitForValue(subscribers, (count) => count === 1, WAIT_MS, 20)).value, 1, 'the stream is listening')
  // Far more than the socket's buffers hold: the rest waits in the gateway, until the limit.
  const notice = { courierId: rider.id, event: 'offer_withdrawn' as const, data: { order_id: 'ORD-0000000000', padding: 'x'.repeat(10_000) } }
  const sent = await waitForValue(async () => {
    await Promise.all(Array.from({ length: 100 }, () => tellCourier(redis, db.config.QUEUE_PREFIX, notice)))
    return subscribers()
  }, (count) => count === 0, WAIT_MS, 0)
  t.equal(sent.value, 0, 'the gateway ended the stream and let go of its channel')
  const me = await fetch(`${base}/v2/courier/me`, { headers: bearer(rider.token) })
  t.equal(me.status, 200, 'the gateway goes on')
  await me.body?.cancel()
})

t.test('an offer made while the courier had no stream open comes first when they connect, before any later notice', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Back in signal', kmNorth(ISLAND, 0.2))
  const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offer = await pendingOffer(db.sql, orderId!)
  t.equal(offer?.courierId, rider.id, 'offered while no stream of theirs was open')

  const stream = await openStream(rider.token)
  t.teardown(stream.close)
  const connected = await stream.connected()
  t.ok(connected.held)
  t.same(stream.events.map((event) => `${event.event} ${String(event.data.order_id)}`), [`offer ${orderId}`], 'the pending offer was sent before the stream said connected')
  t.match(stream.events[0]?.data, { offer_id: offer?.id, order_id: orderId, expires_at: String }, 'as GET /v2/courier/offers shows it')

  t.equal((await fetch(`${base}/v2/business/orders/${orderId}/cancel`, { method: 'POST', headers: bearer(account.apiKey) })).status, 200)
  const withdrawn = await stream.next('offer_withdrawn', orderId!)
  t.ok(withdrawn.held, 'and its withdrawal follows it')
})

t.test('a cancel or an assignment made in the console tells the courier on the stream, as the API does', async (t) => {
  const { app, url } = await startConsole(t, db.env)
  const login = await consoleUser(db.sql, url, { email: 'ops@stream.example', role: 'operator' })
  const ops = new ConsoleClient(app)
  await ops.setPassword(login.link)
  await ops.logIn(login)
  // At the pickup itself: nearer than every courier earlier cases left on shift.
  const rider = await onShift(gateway, db.sql, 'Console streamer', kmNorth(ISLAND, 0.01))
  const stream = await openStream(rider.token)
  t.teardown(stream.close)
  t.ok((await stream.connected()).held)

  // Offered, then assigned by hand to a courier outside the system: the offer is withdrawn.
  const [handed] = await placeOrders(gateway, account.apiKey, [shipment()])
  t.ok((await stream.next('offer', handed!)).held)
  await ops.get(`/console/ops/orders/${handed}`)
  t.equal((await ops.post(`/console/ops/orders/${handed}/advance`, { to: 'assigned', courier_name: 'Musa Bello', courier_phone: '+2348090000000' })).statusCode, 303)
  const taken = await stream.next('offer_withdrawn', handed!)
  t.match(taken.value?.data, { order_id: handed, reason: 'assigned' }, 'an operator\'s assignment withdraws the offer on the stream')

  // Offered, then cancelled by the operator: withdrawn.
  const [withdrawn] = await placeOrders(gateway, account.apiKey, [shipment()])
  t.ok((await stream.next('offer', withdrawn!)).held)
  await ops.get(`/console/ops/orders/${withdrawn}`)
  t.equal((await ops.post(`/console/ops/orders/${withdrawn}/cancel`, { reason: 'duplicate' })).statusCode, 303)
  t.match((await stream.next('offer_withdrawn', withdrawn!)).value?.data, { order_id: withdrawn, reason: 'cancelled' }, 'an operator\'s cancel withdraws it')

  // Accepted, then cancelled by the business on its console page: the courier is told.
  const owner = await consoleUser(db.sql, url, { email: 'owner@stream.example', role: 'business', businessId: account.businessId })
  const business = new ConsoleClient(app)
  await business.setPassword(owner.link)
  await business.logIn(owner)
  const [held] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await stream.next('offer', held!)
  const accepted = await fetch(`${base}/v2/courier/offers/${String(offered.value?.data.offer_id)}/accept`, { method: 'POST', headers: bearer(rider.token) })
  t.equal(accepted.status, 200)
  await accepted.body?.cancel()
  await business.get(`/console/orders/${held}`)
  t.equal((await business.post(`/console/orders/${held}/cancel`, { reason: 'changed my mind' })).statusCode, 303)
  t.ok((await stream.next('order_cancelled', held!)).held, 'a business\'s cancel in the console tells the courier who holds the order')

  /** A new order, offered to the rider and accepted by them. */
  const heldByRider = async () => {
    const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
    const offer = await stream.next('offer', orderId!)
    const accept = await fetch(`${base}/v2/courier/offers/${String(offer.value?.data.offer_id)}/accept`, { method: 'POST', headers: bearer(rider.token) })
    t.equal(accept.status, 200)
    await accept.body?.cancel()
    return orderId!
  }

  // Accepted, then handed back by the courier themselves: nothing to tell them.
  const ownHandBack = await heldByRider()
  const own = await fetch(`${base}/v2/courier/orders/${ownHandBack}/unassign`, { method: 'POST', headers: { ...bearer(rider.token), 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'flat tyre' }) })
  t.equal(own.status, 200)
  await own.body?.cancel()

  // Accepted, then handed back to dispatch by the operator: the courier is told it is no longer theirs.
  const unassigned = await heldByRider()
  await ops.get(`/console/ops/orders/${unassigned}`)
  t.equal((await ops.post(`/console/ops/orders/${unassigned}/advance`, { to: 'created', reason: 'rider stuck in traffic' })).statusCode, 303)
  const handedBack = await stream.next('order_unassigned', unassigned)
  t.match(handedBack.value?.data, { order_id: unassigned, reason: 'rider stuck in traffic' }, 'an operator\'s hand-back tells the courier who held the order, saying why')
  // Notices reach a channel in the order they were sent: the first hand-back's would have come before.
  t.same(stream.events.filter((event) => event.data.order_id === ownHandBack && event.event !== 'offer').map((event) => event.event), [], 'the courier\'s own hand-back was not told back to them')
  for (const orderId of [ownHandBack, unassigned]) await fetch(`${base}/v2/business/orders/${orderId}/cancel`, { method: 'POST', headers: bearer(account.apiKey) })
})

t.test('an operator who gives a courier another order withdraws the offer they hold, and that order goes to the next courier', async (t) => {
  // At COURIER_CAPACITY (1) the courier could not take both: an accept of the offer after the
  // operator's assignment would have given them two orders.
  const rider = await onShift(gateway, db.sql, 'Given another', kmNorth(ISLAND, 0.005))
  const stream = await openStream(rider.token)
  t.teardown(stream.close)
  t.ok((await stream.connected()).held)
  const [offeredOrder] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await stream.next('offer', offeredOrder!)
  t.ok(offered.held, 'the rider is offered the order')
  const offerId = String(offered.value?.data.offer_id)
  await onShift(gateway, db.sql, 'Spare rider', kmNorth(ISLAND, 0.5))

  // Picked up where no courier is in range, so no offer of it is withdrawn and nobody is freed: the
  // withdrawal itself sends the rider's offered order on (else the dispatcher's sweep, 5 s later).
  const [handed] = await placeOrders(gateway, account.apiKey, [shipment({ pickup_latitude: IKEJA.lat, pickup_longitude: IKEJA.lng, dropoff_latitude: LEKKI.lat, dropoff_longitude: LEKKI.lng })])
  const assigned = await runOperatorCli(db, ['order:advance', '--order', handed!, '--to', 'assigned', '--courier', rider.id])
  t.equal(assigned.code, 0, assigned.stderr)
  const withdrawn = await stream.next('offer_withdrawn', offeredOrder!)
  t.same(withdrawn.value?.data, { offer_id: offerId, order_id: offeredOrder, reason: 'given another order' }, 'the rider hears why the offer went')
  const given = await stream.next('order_assigned', handed!)
  t.same(given.value?.data, { order_id: handed }, 'and that the operator gave them the other order')
  const accept = await fetch(`${base}/v2/courier/offers/${offerId}/accept`, { method: 'POST', headers: bearer(rider.token) })
  t.equal(accept.status, 409)
  t.equal((await accept.json()).message, `Offer ${offerId} was withdrawn`)
  const me = await (await fetch(`${base}/v2/courier/me`, { headers: bearer(rider.token) })).json()
  t.same(me.active_orders.map((order: { order_id: string }) => order.order_id), [handed], 'the rider holds the one order the operator gave them')
  const next = await pendingOffer(db.sql, offeredOrder!, [offerId])
  t.ok(next && next.courierId !== rider.id, 'the order they were offered goes on to the next courier at once (the spare, or one earlier cases left free)')
  for (const orderId of [offeredOrder, handed]) await fetch(`${base}/v2/business/orders/${orderId}/cancel`, { method: 'POST', headers: bearer(account.apiKey) })
})

t.test('a second stream of the courier that opens and closes while the first subscribes leaves the first listening', async (t) => {
  const streams = createCourierStreams(db.config, gateway.log)
  t.teardown(streams.close)
  const courierId = '00000000-0000-4000-8000-00000000a11e'
  const heard: string[] = []
  // The first stream's subscription is under way when the second joins and leaves.
  const first = streams.listen(courierId, (notice) => heard.push(notice.event))
  const second = await streams.listen(courierId, () => {})
  second()
  const stop = await first
  t.teardown(stop)
  const channel = courierChannel(db.config.QUEUE_PREFIX, courierId)
  const [, subscribers] = (await redis.pubsub('NUMSUB', channel)) as [string, number]
  t.equal(Number(subscribers), 1, 'the channel is still subscribed for the stream left open')
  await tellCourier(redis, db.config.QUEUE_PREFIX, { courierId, event: 'order_cancelled', data: { order_id: 'ORD-STILLHEARD' } })
  const got = await waitForValue(async () => heard, (events) => events.length > 0, WAIT_MS, 20)
  t.same(got.value, ['order_cancelled'], 'and the open stream hears the next notice')
})

t.test('disabling a courier ends their open streams, and only theirs; a new phone ends none', async (t) => {
  const [leaving, staying] = [await onShift(gateway, db.sql, 'Leaving rider', kmNorth(ISLAND, 3)), await onShift(gateway, db.sql, 'Staying rider', kmNorth(ISLAND, 3.1))]
  const [gone, kept] = [await openStream(leaving.token), await openStream(staying.token)]
  t.teardown(gone.close)
  t.teardown(kept.close)
  for (const stream of [gone, kept]) t.ok((await stream.connected()).held)
  // What courier:phone announces, on the same channel ahead of the disable's: heard first.
  await publishInvalidation(redis, db.config.QUEUE_PREFIX, { kind: 'courier', courierId: staying.id })
  await disableCourierAndAnnounce(db.sql, 'test', leaving.id, { announce: (message) => publishInvalidation(redis, db.config.QUEUE_PREFIX, message), redispatch: async () => {} })
  t.ok((await waitForValue(async () => gone.state.ended, (ended) => ended, WAIT_MS, 20)).held, 'the disabled courier\'s stream ends, as their token is refused from now on')
  t.ok((await stillHears(kept, redis, staying.id, 'ORD-KEPTOPEN')).held, 'another courier\'s stream still hears their notices, their new phone notwithstanding')
  t.notOk(kept.state.ended, 'and stays open')
  await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: bearer(staying.token), payload: { status: 'offline' } })
})

t.test('a revocation not heard while the invalidation channel was away still ends its stream when the channel comes back', async (t) => {
  // A gateway on a Redis of its own, whose subscribers the test can cut without touching other files'.
  const own = await startOwnRedis(t)
  const config = loadConfig(gatewayEnv, { ...db.env, REDIS_URL: own.url, PRICING_URL: 'http://127.0.0.1:9' })
  const apart = Fastify({ ...gatewayServerOptions(config), logger: false })
  await apart.register(gatewayApp, { config })
  await apart.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => apart.close())
  const at = apart.server.address()
  const from = `http://127.0.0.1:${typeof at === 'object' && at ? at.port : 0}`
  const [leaving, staying] = [await createdCourier(db.sql, { name: 'Unheard disable' }), await createdCourier(db.sql, { name: 'Still riding' })]
  const [gone, kept] = [await openStream(leaving.token, from), await openStream(staying.token, from)]
  t.teardown(gone.close)
  t.teardown(kept.close)
  for (const stream of [gone, kept]) t.ok((await stream.connected()).held)
  // Disabled, and the announcement lost (published nowhere): the stream does not hear of it.
  await disableCourierAndAnnounce(db.sql, 'test', leaving.courier.id, { announce: async () => {}, redispatch: async () => {} })
  const admin = new Redis(own.url)
  t.teardown(() => admin.disconnect())
  await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
  t.ok((await waitForValue(async () => gone.state.ended, (ended) => ended, WAIT_MS, 20)).held, 'the disabled courier\'s stream ends once the gateway is back on the channel')
  t.ok((await stillHears(kept, admin, staying.courier.id, 'ORD-KEPTAFTER')).held, 'another courier\'s stream, back on its channel too, still hears their notices')
  t.notOk(kept.state.ended, 'and stays open')
})

t.test('a gateway that stops ends its streams first: the couriers reconnect to a replica still serving', async (t) => {
  const config = loadConfig(gatewayEnv, { ...db.env, PRICING_URL: 'http://127.0.0.1:9' })
  const leaving = Fastify({ ...gatewayServerOptions(config), logger: false })
  await leaving.register(gatewayApp, { config })
  await leaving.listen({ port: 0, host: '127.0.0.1' })
  const at = leaving.server.address()
  const rider = await onShift(gateway, db.sql, 'Rolling deploy', kmNorth(ISLAND, 0.4))
  const stream = await openStream(rider.token, `http://127.0.0.1:${typeof at === 'object' && at ? at.port : 0}`)
  t.teardown(stream.close)
  t.ok((await stream.connected()).held)

  const stopping = leaving.close()
  const ended = await waitForValue(async () => stream.state.ended, (done) => done, WAIT_MS, 20)
  t.ok(ended.held, 'the stream ended as the gateway began to stop, not when the stop was forced')
  // Before, an open stream held the stop until the process was killed: let go of it so this file ends.
  if (!ended.held) await stream.close()
  await stopping
})

t.test('a stream asked for while the gateway stops is refused in the error body, not opened where nothing would end it', async (t) => {
  // Long lock waits: the token's look-up is held below until the stop has begun.
  const config = loadConfig(gatewayEnv, { ...db.env, PRICING_URL: 'http://127.0.0.1:9', PG_LOCK_TIMEOUT_MS: '60000', PG_STATEMENT_TIMEOUT_MS: '60000' })
  const leaving = Fastify({ ...gatewayServerOptions(config), logger: false })
  await leaving.register(gatewayApp, { config })
  await leaving.listen({ port: 0, host: '127.0.0.1' })
  const at = leaving.server.address()
  // Its token is new to this gateway, so the request waits in the token's look-up, held by this lock.
  const rider = await onShift(gateway, db.sql, 'Late stream', kmNorth(ISLAND, 0.4))
  const tokens = await holdLock(db.sql, (tx) => tx`lock table courier_tokens in access exclusive mode`)
  t.teardown(tokens.release)
  const asked = fetch(`http://127.0.0.1:${typeof at === 'object' && at ? at.port : 0}/v2/courier/stream`, { headers: { ...bearer(rider.token), accept: 'text/event-stream' } })
  t.ok(await waitFor(async () => (await lockWaiters(db.sql, tokens.pid)).length > 0, WAIT_MS), 'the request waits on the token look-up')

  const stopping = leaving.close()
  t.ok(await waitFor(() => !leaving.server.listening, WAIT_MS), 'the gateway is stopping')
  await tokens.release()
  const answer = await asked
  t.equal(answer.status, 503, 'refused, not opened')
  t.match(await answer.json(), { statusCode: 503, path: '/v2/courier/stream', message: STREAM_STOPPING, request_id: String }, "in the spec's error body")
  await stopping
})

