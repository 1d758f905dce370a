import t from 'tap'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { waitForValue } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { seedOrder } from '../../helpers/console.js'
import type { OrderStatus } from '../../../shared/courier.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { changeOrder } from '../../../shared/orders/change.js'

// Couriers and dispatch end to end (DESIGN 14): real Postgres, Redis, BullMQ, the gateway's
// courier API and the dispatcher, with short offers so expiry is seen within a test. They run in
// this process, built from the plugins production runs; launched.test.ts checks the same contract
// against the built launcher (DESIGN 17.5), which a setting it fails to pass on would break.
const WAIT_MS = 15_000
// Short enough to see an offer expire within a wait (those waits add OFFER_S to WAIT_MS), long
// enough that an accept or a cancel of an offer just found pending lands before it expires on a
// busy 2-core machine: at 2 s an accept could meet 409 "has expired".
const OFFER_S = 5
const { db, gateway } = await startStack(t, { dispatcher: true, env: { DISPATCH_OFFER_S: String(OFFER_S), DISPATCH_RETRY_S: '1' } })
const account = await seedAccount(db.sql, { balance: 100000 })
const redis = createRedis(db.config)
t.teardown(() => redis.disconnect())

async function courier(name: string, at: { lat: number; lng: number }, vehicleType: 'bike' | 'car' | 'bus_van' | 'truck' = 'bike') {
  const created = await createdCourier(db.sql, { name, vehicleType })
  const auth = bearer(created.token)
  const shift = await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: auth, payload: { status: 'available' } })
  t.equal(shift.statusCode, 200, shift.body)
  const ping = await gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: auth, payload: { latitude: at.lat, longitude: at.lng } })
  t.equal(ping.statusCode, 204, ping.body)
  return { id: created.courier.id, auth }
}

async function place(overrides: Record<string, unknown> = {}): Promise<string> {
  const placed = await waitForValue(
    () => gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), 'idempotency-key': `k-${Math.random()}` }, payload: [shipment(overrides)] }),
    (response) => response.statusCode === 201, WAIT_MS, 100)
  t.equal(placed.value.statusCode, 201, placed.value.body)
  return placed.value.json().orders[0].order_id
}

async function offersOf(auth: Record<string, string>, orderId: string) {
  const seen = await waitForValue(async () => (await gateway.inject({ method: 'GET', url: '/v2/courier/offers', headers: auth })).json().data,
    (offers: { order_id: string; offer_id: string }[] | undefined) => (offers ?? []).some((offer) => offer.order_id === orderId), WAIT_MS, 50)
  return (seen.value ?? []).filter((offer) => offer.order_id === orderId)
}

t.test('the nearest courier is offered the order, accepts it, and moves it to delivered; the business sees each step', async (t) => {
  const near = await courier('Near Rider', { lat: ISLAND.lat + 0.005, lng: ISLAND.lng })
  const far = await courier('Far Rider', { lat: ISLAND.lat + 0.05, lng: ISLAND.lng })
  const orderId = await place()
  const [offer] = await offersOf(near.auth, orderId)
  t.ok(offer, 'the nearest courier has the offer')
  t.notOk(JSON.stringify(offer).includes('Chidi'), 'an offer never names the recipient')
  t.notOk('price' in offer, 'nor shows the price')
  t.same((await gateway.inject({ method: 'GET', url: '/v2/courier/offers', headers: far.auth })).json().data, [], 'the farther one has none')

  const expiryJob = `${db.config.QUEUE_PREFIX}:dispatch:expire-${offer.offer_id}`
  t.equal((await waitForValue(() => redis.exists(expiryJob), (count) => count === 1, WAIT_MS, 20)).value, 1, 'the offer has its expiry job')
  const accepted = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/accept`, headers: near.auth })
  t.equal(accepted.statusCode, 200, accepted.body)
  t.equal(await redis.exists(expiryJob), 0, 'accepted, the offer needs no expiry: its job is gone')
  t.match(accepted.json(), { order_id: orderId, status: 'assigned', dropoff: { recipient_name: 'Chidi Okafor' } })
  t.notOk('price' in accepted.json(), 'the courier view has no price')
  const again = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/accept`, headers: near.auth })
  t.equal(again.statusCode, 200, 'a second accept (a double tap, a retry after a lost answer) is no refusal')
  t.strictSame(again.json(), accepted.json(), 'it answers as the first did')
  const declined = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/decline`, headers: near.auth })
  t.equal(declined.statusCode, 409)
  t.equal(declined.json().message, `Offer ${offer.offer_id} was accepted`, 'an accepted offer is not declined, and says why')

  const read = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: bearer(account.apiKey) })
  t.match(read.json(), { status: 'assigned', courier: { id: near.id, name: 'Near Rider', vehicle_type: 'bike', location: { latitude: Number } }, eta: { stage: 'pickup', at: String } })
  const listed = (await gateway.inject({ method: 'GET', url: '/v2/business/orders', headers: bearer(account.apiKey) })).json().data.find((order: { order_id: string }) => order.order_id === orderId)
  t.same({ courier: listed.courier, eta: listed.eta }, { courier: read.json().courier, eta: read.json().eta }, 'a page of orders shows the same position and ETA as the order itself')

  // An app that restarted after the accept reads its work again, exactly as the accept gave it.
  const held = await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: near.auth })
  t.equal(held.statusCode, 200, held.body)
  t.strictSame(held.json(), accepted.json(), 'the order as the accept answered it')
  t.strictSame((await gateway.inject({ method: 'GET', url: '/v2/courier/orders', headers: near.auth })).json(), { data: [accepted.json()] }, 'and in the list of what the courier holds')
  t.equal((await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: far.auth })).statusCode, 404, "another courier's order is not found, to read either")
  t.strictSame((await gateway.inject({ method: 'GET', url: '/v2/courier/orders', headers: far.auth })).json(), { data: [] })

  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: far.auth })).statusCode, 404, "another courier's order is not found")
  const pickedUp = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: near.auth })
  t.equal(pickedUp.statusCode, 200)
  t.match((await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: near.auth })).json(), { status: 'picked_up' })
  // A phone between cells sends a move again when its answer was lost: it is answered as it was.
  const pickedUpAgain = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/pickup`, headers: near.auth })
  t.equal(pickedUpAgain.statusCode, 200, 'a retried pickup is no refusal')
  t.strictSame(pickedUpAgain.json(), pickedUp.json(), 'it answers as the first did')
  const delivered = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: near.auth, payload: {} })
  t.equal(delivered.statusCode, 200)
  t.match(delivered.json(), { status: 'delivered', dropoff: { recipient_name: null, recipient_phone: null, address: null, latitude: null } }, 'delivered, the answer no longer names the recipient')
  const deliveredAgain = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: near.auth, payload: {} })
  t.equal(deliveredAgain.statusCode, 200, 'a retried delivery is no refusal')
  t.strictSame(deliveredAgain.json(), delivered.json(), 'it answers as the first did')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/deliver`, headers: far.auth, payload: {} })).statusCode, 404, "another courier's retry finds nothing")
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${orderId}/fail`, headers: near.auth, payload: { reason: 'late' } })).statusCode, 409, 'another move after it is still refused')
  t.equal((await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: near.auth })).statusCode, 404, 'delivered, it is no longer theirs to read (nor the recipient with it)')
  t.strictSame((await gateway.inject({ method: 'GET', url: '/v2/courier/orders', headers: near.auth })).json(), { data: [] })
  const events = await db.sql<{ type: string; data: { order: { courier: { location: unknown } | null } } }[]>`select type, data from events where order_id = ${orderId} order by sequence`
  t.same(events.map((event) => event.type), ['order.created', 'order.assigned', 'order.picked_up', 'order.delivered'], 'one event per courier move, as for operator moves')
  t.match(events[2]?.data.order.courier, { location: { latitude: Number } }, 'picked up: the event shows where the courier is')
  t.equal(events[3]?.data.order.courier?.location, null, 'delivered: no position, as the order itself shows none')
  t.equal(events.filter((event) => event.type === 'order.assigned').length, 1, 'the second accept assigned nothing again')
  await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: far.auth, payload: { status: 'offline' } })
  await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: near.auth, payload: { status: 'offline' } })
})

t.test('GET /v2/courier/orders lists every order the courier holds, in full, oldest assignment first', async (t) => {
  const busy = await createdCourier(db.sql, { name: 'Busy Rider' })
  const auth = bearer(busy.token)
  // Four orders made in this order, given to the courier by the operator (no capacity applies to
  // that) in another: the list follows the assignments, whatever status each has got to since.
  const [first, second, third, fourth] = [await seedOrder(db.sql, account.businessId), await seedOrder(db.sql, account.businessId), await seedOrder(db.sql, account.businessId), await seedOrder(db.sql, account.businessId)]
  const moves: [string, OrderStatus[]][] = [[third, ['assigned', 'picked_up', 'failed']], [first, ['assigned']], [fourth, ['assigned', 'picked_up', 'delivered']], [second, ['assigned', 'picked_up']]]
  for (const [orderId, steps] of moves) {
    for (const to of steps) {
      const outcome = await changeOrder(db.sql, { orderId, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? courierOnOrder(busy.courier) : null, reason: to === 'failed' ? 'nobody at the address' : null })
      t.equal(outcome.kind, 'changed', `${orderId} → ${to}`)
    }
  }
  // Assignments made a millisecond apart may share a time: these are a minute apart, in the order made.
  for (const [i, [orderId]] of moves.entries()) await db.sql`update orders set assigned_at = now() - make_interval(mins => ${moves.length - i}) where id = ${orderId}`

  const listed = await gateway.inject({ method: 'GET', url: '/v2/courier/orders', headers: auth })
  t.equal(listed.statusCode, 200, listed.body)
  const held = [third, first, second]
  t.same(listed.json().data.map((order: { order_id: string; status: string }) => [order.order_id, order.status]), [[third, 'failed'], [first, 'assigned'], [second, 'picked_up']],
    'the three held, oldest assignment first; the delivered one is not listed')
  const each = await Promise.all(held.map(async (orderId) => (await gateway.inject({ method: 'GET', url: `/v2/courier/orders/${orderId}`, headers: auth })).json()))
  t.strictSame(listed.json().data, each, 'each as the courier reads it alone')
  const steps = listed.json().data.flatMap((order: { history: object[] }) => order.history)
  t.ok(steps.every((step: object) => Object.keys(step).every((key) => ['status', 'at', 'reason'].includes(key))), 'history steps as documented: status, at, reason')
})

t.test('a declined or expired offer goes to the next courier; a cancel withdraws the pending one', async (t) => {
  const first = await courier('First', { lat: ISLAND.lat + 0.001, lng: ISLAND.lng })
  const second = await courier('Second', { lat: ISLAND.lat + 0.02, lng: ISLAND.lng })
  const orderId = await place()
  const [offer] = await offersOf(first.auth, orderId)
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/decline`, headers: first.auth, payload: { reason: 'flat tyre' } })).statusCode, 204)
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/decline`, headers: first.auth })).statusCode, 204, 'declining again (a retry) finds it done')
  const undone = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.offer_id}/accept`, headers: first.auth })
  t.equal(undone.statusCode, 409)
  t.equal(undone.json().message, `Offer ${offer.offer_id} was declined`, 'a declined offer says so when accepted after all')
  const [next] = await offersOf(second.auth, orderId)
  t.ok(next, 'the second courier is offered it after the decline')
  // Left to expire: it comes back to nobody (the first declined this round), then a new round.
  const expired = await waitForValue(async () => (await db.sql`select status from dispatch_offers where id = ${next.offer_id}`)[0]?.status, (status) => status === 'expired', OFFER_S * 1000 + WAIT_MS, 100)
  t.equal(expired.value, 'expired')
  const late = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${next.offer_id}/accept`, headers: second.auth })
  t.equal(late.statusCode, 409)
  t.match(late.json().message, /has expired/)

  const [pending] = await waitForValue(async () => db.sql<{ id: string; courierId: string }[]>`select id, courier_id from dispatch_offers where order_id = ${orderId} and status = 'pending'`, (rows) => rows.length === 1, WAIT_MS, 100).then((seen) => seen.value)
  t.ok(pending, 'a new round offers it again')
  const cancelled = await gateway.inject({ method: 'POST', url: `/v2/business/orders/${orderId}/cancel`, headers: bearer(account.apiKey) })
  t.equal(cancelled.statusCode, 200)
  const [withdrawn] = await db.sql`select status from dispatch_offers where id = ${pending.id}`
  t.equal(withdrawn.status, 'withdrawn', 'the cancel withdrew the pending offer')
  for (const c of [first, second]) await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: c.auth, payload: { status: 'offline' } })
})

t.test('courier routes take courier tokens only, and bad input gets the spec error body', async (t) => {
  const business = await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: bearer(account.apiKey) })
  t.equal(business.statusCode, 401)
  t.match(business.json(), { statusCode: 401, message: 'Invalid courier token', path: '/v2/courier/me' })
  const rider = await courier('Checker', { lat: 9, lng: 7 })
  t.equal((await gateway.inject({ method: 'GET', url: '/v2/business/orders', headers: rider.auth })).statusCode, 401, 'a courier token opens no business route')
  const bad = await gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: rider.auth, payload: { latitude: 91, longitude: 'x' } })
  t.equal(bad.statusCode, 400)
  t.match(bad.json(), { statusCode: 400, path: '/v2/courier/location' })
  const shift = await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: rider.auth, payload: { status: 'sleeping' } })
  t.equal(shift.statusCode, 400)
  const flood = await gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: rider.auth, payload: { latitude: 9, longitude: 7 } })
  t.equal(flood.statusCode, 429, 'one ping a second')
  t.match(flood.json(), { statusCode: 429, path: '/v2/courier/location', message: 'Too many requests, retry in 1 seconds' }, 'with DESIGN 2\'s one 429 message')
  t.equal(flood.headers['retry-after'], '1')
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/courier/offers/off_0000000000000000/accept', headers: rider.auth })).statusCode, 404)
  const me = await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: rider.auth })
  t.match(me.json(), { name: 'Checker', shift: 'available', location: { latitude: 9, longitude: 7 }, active_orders: [] })
})
