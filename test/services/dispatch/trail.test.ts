import t, { type Test } from 'tap'
import { recordPing, restTrail, resumeTrail, TRAIL_EVERY_S, TRAIL_IDLE_S } from '../../../shared/couriers/positions.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { eraseOrders } from '../../../shared/db/personal-data.js'
import { findTrail } from '../../../shared/db/trails.js'
import { offerNext } from '../../../shared/dispatch/dispatch.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift, ping, placeOrders, type TestCourier } from '../../helpers/couriers.js'
import { PLACE } from '../../helpers/gateway.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// An order's trail (DESIGN 14): while a courier holds an order, one of their fixes per 30 s is
// kept for it; none while they hold nothing or after delivery; erased with the order's personal
// data. The 30 s (and the 1 s ping limit) are Redis keys with a TTL: the test deletes them
// instead of waiting them out.
const { gateway, db } = await startStack(t)
const prefix = db.env.QUEUE_PREFIX!
const account = await seedAccount(db.sql, { balance: 100000 })
const client = createRedis(db.config)
t.teardown(() => client.disconnect())
const trailKey = (rider: TestCourier) => `${prefix}:courier:${rider.id}:trail`
const gateKey = (rider: TestCourier) => `${prefix}:courier:${rider.id}:ping`

/** A ping past the one-a-second gate (and, with `newWindow`, in a trail window of its own), answered 204. */
async function pingNow(t: Test, rider: TestCourier, fix: { latitude: number; longitude: number; at?: string }, { newWindow }: { newWindow: boolean }): Promise<void> {
  await client.del(gateKey(rider), ...(newWindow ? [trailKey(rider)] : []))
  const response = await gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: rider.auth, payload: fix })
  t.equal(response.statusCode, 204, response.body)
}

t.test('one point per 30 s while the order is held, none otherwise, erased with the order', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Trail Rider', ISLAND)
  const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment()] })
  const orderId: string = placed.json().orders[0].order_id
  const ping = (latitude: number, longitude: number, window: { newWindow: boolean }) => pingNow(t, rider, { latitude, longitude }, window)

  await ping(6.451, 3.401, { newWindow: true })
  t.same(await findTrail(db.sql, orderId), [], 'no point while the courier holds no order')

  const row = (await findCourier(db.sql, rider.id))!
  const assigned = await changeOrder(db.sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(row), reason: null })
  t.equal(assigned.kind, 'changed')
  await ping(6.452, 3.402, { newWindow: true })
  await ping(6.453, 3.403, { newWindow: false })
  t.same((await findTrail(db.sql, orderId)).map((point) => [point.latitude, point.longitude]), [[6.452, 3.402]], 'the first fix of a 30 s window is kept, the next one in it is not')

  await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: rider.auth })
  await ping(6.46, 3.39, { newWindow: true })
  await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: rider.auth, payload: {} })
  await ping(6.5, 3.38, { newWindow: true })
  const trail = await findTrail(db.sql, orderId)
  t.same(trail.map((point) => [point.latitude, point.longitude]), [[6.452, 3.402], [6.46, 3.39]], 'a point per window while assigned and picked up, none after delivery')
  t.ok(trail.every((point, i) => i === 0 || point.at > trail[i - 1]!.at), 'in time order')

  await db.sql.begin((tx) => eraseOrders(tx, { orderIds: [orderId] }, ['recipient_name']))
  t.same(await findTrail(db.sql, orderId), [], 'erasure removes the trail')
})

t.test('an idle courier is looked up once per TRAIL_IDLE_S, and an order taken starts its trail at the next fix', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Idle Rider', ISLAND)
  const window = trailKey(rider)

  await pingNow(t, rider, { latitude: 6.451, longitude: 3.401 }, { newWindow: true })
  const rest = await client.ttl(window)
  t.ok(rest > TRAIL_EVERY_S && rest <= TRAIL_IDLE_S, `holding nothing when a point fell due: the next look in ${TRAIL_IDLE_S} s, not ${TRAIL_EVERY_S} (TTL ${rest} s)`)

  // The offer as the dispatcher makes it, accepted through the API as a rider's app does.
  const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
  const step = await offerNext(db.sql, client, prefix, { radiusKm: 10, offerS: 600, maxOffers: 5, retryS: 1, capacity: 1, staleS: 600 }, orderId!, null)
  t.equal(step.kind === 'offered' && step.courierId, rider.id, 'offered to the rider')
  const offerId = step.kind === 'offered' ? step.offer.id : ''
  const accepted = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offerId}/accept`, headers: rider.auth })
  t.equal(accepted.statusCode, 200, accepted.body)
  t.equal(await client.exists(window), 0, 'the accept ends the rest')
  await pingNow(t, rider, { latitude: 6.452, longitude: 3.402 }, { newWindow: false })
  t.same((await findTrail(db.sql, orderId!)).map((point) => [point.latitude, point.longitude]), [[6.452, 3.402]], 'the first fix after the accept is the trail\'s first point')
  t.ok(await client.ttl(window) <= TRAIL_EVERY_S, 'then one point per 30 s again')

  // A fix resent with the moment of a point already kept adds nothing, but the order is still held.
  const [first] = await findTrail(db.sql, orderId!)
  await pingNow(t, rider, { latitude: 6.452, longitude: 3.402, at: first!.at.toISOString() }, { newWindow: true })
  t.equal((await findTrail(db.sql, orderId!)).length, 1, 'the repeated moment is kept once')
  t.ok(await client.ttl(window) <= TRAIL_EVERY_S, 'and the courier holding an order is not rested')
})

t.test('a rest lengthens only the window its own fix opened', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Racing Rider', ISLAND)
  const window = trailKey(rider)
  const courier = { id: rider.id, vehicleType: 'bike' as const }
  let second = 0
  // A ping as the gateway records it, a second after the last (past the one-a-second gate), each newer than the fix kept.
  const start = Date.now()
  const recorded = async () => {
    await client.del(gateKey(rider))
    const fix = { latitude: 6.45, longitude: 3.4, at: new Date(start + ++second * 1000).toISOString() }
    return { fix, ping: await recordPing(client, prefix, courier, fix) }
  }
  const ttl = () => client.ttl(window)

  await client.del(window)
  const a = await recorded()
  t.match(a.ping, { kind: 'recorded', trailDue: true })
  await restTrail(client, prefix, rider.id, a.fix)
  t.ok(await ttl() > TRAIL_EVERY_S, 'its own window rests')

  await client.del(window)
  const b = await recorded()
  await resumeTrail(client, prefix, rider.id)
  await restTrail(client, prefix, rider.id, b.fix)
  t.equal(await client.exists(window), 0, 'a window an accept cleared meanwhile stays cleared: the next fix is looked at')

  const c = await recorded()
  await resumeTrail(client, prefix, rider.id)
  const d = await recorded()
  t.match(d.ping, { kind: 'recorded', trailDue: true }, 'after the accept, the next ping opens a window of its own')
  await restTrail(client, prefix, rider.id, c.fix)
  t.ok(await ttl() <= TRAIL_EVERY_S, 'a rest that comes late leaves the later window as it is')
})

t.test('a fix dated later than its arrival (a phone clock ahead) is taken as arrived now', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Clock Ahead', ISLAND)
  const here = { lat: 6.45, lng: 3.4 }
  const ahead = new Date(Date.now() + 3600_000)
  await ping(gateway, rider.auth, here, ahead)
  const after = Date.now()
  const me = await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: rider.auth })
  const at = Date.parse(me.json().location.at)
  t.ok(at <= after, `the fix's time (${me.json().location.at}) is no later than its arrival, not the phone's ${ahead.toISOString()}`)

  // A fix older than the one kept (queued while the phone had no signal, sent after a newer one)
  // is answered 204 and dropped: where the courier is stays the newest fix.
  const kept = me.json().location
  await ping(gateway, rider.auth, { lat: 6.5, lng: 3.5 }, new Date(at - 30_000))
  t.same((await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: rider.auth })).json().location, kept, 'an older fix does not move the courier back')

  // An earlier time than the ping's arrival stands as sent, when it is the newest fix.
  const earlier = new Date(Date.now() - 30_000)
  const late = await onShift(gateway, db.sql, 'Late Sender', here, { fixAt: earlier })
  t.equal((await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: late.auth })).json().location.at, earlier.toISOString(), 'an earlier time is kept as sent')
})
