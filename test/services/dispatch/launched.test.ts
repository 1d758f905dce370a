import t, { type Test } from 'tap'
import { kmNorth } from '../../helpers/couriers.js'
import { acceptOverHttp, courierOnShift, courierPost, openStream, type CourierStream, type HttpCourier } from '../../helpers/http-couriers.js'
import { startLauncher } from '../../helpers/launcher.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'

// The dispatch contract (DESIGN 14, 17.2) against the built launcher, as 17.5 asks: its gateway
// serves the courier API and streams, its dispatcher makes the offers, and the small settings
// reach it through the launcher's environment. Only HTTP and SSE, as a rider's phone and a
// business's server see them; offers are read from their rows, the truth. The other files of
// this folder run the same plugins in-process, which a wiring fault of the launcher would pass.
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
// Short enough to see an offer expire within a wait, long enough that an accept or a cancel on a
// busy 2-core machine (dispatcher → Redis → the gateway's stream → HTTP) lands before it does.
const OFFER_S = 5
const launched = await startLauncher(t, { databaseUrl, redisUrl, env: { DISPATCH_OFFER_S: String(OFFER_S), DISPATCH_RETRY_S: '1', DISPATCH_RADIUS_KM: '3' } })
const { baseUrl, business, sql } = launched

// One pickup per subtest, inside the demo card's zones and at least 7 km from the others, with its
// couriers within 1.5 km of it: farther than DISPATCH_RADIUS_KM from any other subtest's pickup,
// so none is offered another's order (every courier of the stack is in one dispatch set).
const AREAS = {
  island: ISLAND,
  lekki: { lat: 6.44, lng: 3.56 },
  ikeja: { lat: 6.62, lng: 3.33 },
  mainland: { lat: 6.50, lng: 3.35 },
}

/** A live order picked up at `at`, placed with the demo key; its id. */
async function place(at: { lat: number; lng: number }, overrides: Record<string, unknown> = {}): Promise<string> {
  const placed = await business('POST', 'order', [shipment({ pickup_latitude: at.lat, pickup_longitude: at.lng, ...overrides })])
  if (placed.status !== 201) throw new Error(`placement: ${placed.status} ${await placed.text()}`)
  return (await placed.json()).orders[0].order_id
}

/** A courier on shift `km` north of `at`, with its stream open (closed when the test ends). */
async function riderAt(test: Test, at: { lat: number; lng: number }, km: number): Promise<{ rider: HttpCourier; stream: CourierStream }> {
  const rider = await courierOnShift(baseUrl, sql, `Launched Rider ${km} km`, kmNorth(at, km))
  const stream = await openStream(baseUrl, rider)
  test.teardown(stream.close)
  return { rider, stream }
}

/** The order's offers, oldest first: to whom, how each ended, and how long each was given. */
const offersOf = (orderId: string) => sql<{ courierId: string; status: string; seconds: number }[]>`
  select courier_id, status, extract(epoch from expires_at - created_at)::float as seconds from dispatch_offers where order_id = ${orderId} order by created_at, id`
const read = async (orderId: string) => (await business('GET', `orders/${orderId}`)).json()

t.test('the nearer of two couriers on shift is offered the order on its stream, accepts it, and the business sees it assigned', async (t) => {
  const at = AREAS.island
  const near = await riderAt(t, at, 0.3)
  const far = await riderAt(t, at, 1.5)
  const orderId = await place(at)
  const offer = await near.stream.next('offer', orderId)
  t.match(offer?.data, { order_id: orderId, offer_id: /^off_/, expires_at: String }, 'the offer reaches the nearer courier on its stream')
  t.equal(await acceptOverHttp(baseUrl, near.rider, String(offer?.data.offer_id)), 200, 'and it accepts over HTTP')
  t.same(await offersOf(orderId), [{ courierId: near.rider.id, status: 'accepted', seconds: OFFER_S }], 'one offer, lasting DISPATCH_OFFER_S; the farther courier was never asked')
  t.notOk(far.stream.events.some((seen) => seen.data.order_id === orderId), 'nor told of it')
  const location = kmNorth(at, 0.3)
  t.match(await read(orderId), {
    status: 'assigned',
    courier: { id: near.rider.id, vehicle_type: 'bike', location: { latitude: location.lat, longitude: location.lng, at: String } },
    eta: { stage: 'pickup', at: String },
  }, 'the business reads it assigned, with the courier, where it is, and when it reaches the pickup')
})

t.test('a declined offer goes to the next courier; one left unanswered expires after DISPATCH_OFFER_S, is withdrawn, and goes on', async (t) => {
  const at = AREAS.lekki
  const first = await riderAt(t, at, 0.2)
  const second = await riderAt(t, at, 0.8)
  const third = await riderAt(t, at, 1.4)
  const orderId = await place(at)
  const declined = await first.stream.next('offer', orderId)
  t.ok(declined, 'the nearest is offered it first')
  t.equal((await courierPost(baseUrl, first.rider, `offers/${String(declined?.data.offer_id)}/decline`, { reason: 'flat tyre' })).status, 204)
  const unanswered = await second.stream.next('offer', orderId)
  t.ok(unanswered, 'declined, it is offered to the next nearest')
  // The default DISPATCH_OFFER_S (30) would miss this wait by far.
  const withdrawn = await second.stream.next('offer_withdrawn', orderId, 20_000)
  t.match(withdrawn?.data, { offer_id: unanswered?.data.offer_id, reason: 'expired' }, 'left unanswered, it expires and its courier is told')
  t.ok(await third.stream.next('offer', orderId), 'expired, it is offered to the next')
  // The third offer's own status is left alone: on a busy machine it may expire before the read.
  const rows = await offersOf(orderId)
  t.same(rows.map((offer) => [offer.courierId, offer.seconds]), [[first.rider.id, OFFER_S], [second.rider.id, OFFER_S], [third.rider.id, OFFER_S]], 'the rows say the same')
  t.same(rows.slice(0, 2).map((offer) => offer.status), ['declined', 'expired'])
  t.equal((await business('POST', `orders/${orderId}/cancel`)).status, 200, 'cancelled, so it is offered to nobody after this test')
})

t.test('a business cancel withdraws a pending offer, and tells the courier of an assigned order', async (t) => {
  const at = AREAS.ikeja
  const { rider, stream } = await riderAt(t, at, 0.5)
  const pendingId = await place(at)
  const pending = await stream.next('offer', pendingId)
  t.ok(pending, 'offered')
  t.equal((await business('POST', `orders/${pendingId}/cancel`)).status, 200)
  t.match((await stream.next('offer_withdrawn', pendingId))?.data, { offer_id: pending?.data.offer_id }, 'the pending offer is withdrawn on the stream')
  t.same((await offersOf(pendingId)).map((offer) => offer.status), ['withdrawn'])

  const assignedId = await place(at)
  const offer = await stream.next('offer', assignedId)
  t.equal(await acceptOverHttp(baseUrl, rider, String(offer?.data.offer_id)), 200, 'the next order is offered and accepted')
  t.equal((await business('POST', `orders/${assignedId}/cancel`)).status, 200)
  t.match((await stream.next('order_cancelled', assignedId))?.data, { order_id: assignedId }, 'its courier is told it was cancelled')
  t.match(await read(assignedId), { status: 'cancelled' })
})

t.test('the courier picks the order up and delivers it with the PIN the business was given; the business sees it delivered', async (t) => {
  const at = AREAS.mainland
  const { rider, stream } = await riderAt(t, at, 0.5)
  const orderId = await place(at, { proof: { pin: true } })
  const offer = await stream.next('offer', orderId)
  t.equal(await acceptOverHttp(baseUrl, rider, String(offer?.data.offer_id)), 200, 'offered on the stream and accepted')
  const pickedUp = await courierPost(baseUrl, rider, `orders/${orderId}/pickup`)
  t.equal(pickedUp.status, 200)
  t.match(await pickedUp.json(), { order_id: orderId, status: 'picked_up' })
  const { delivery_pin: pin, eta } = await read(orderId)
  t.match({ pin, eta }, { pin: /^\d{4}$/, eta: { stage: 'dropoff' } }, 'the business reads the PIN, and the ETA now to the dropoff')
  const delivered = await courierPost(baseUrl, rider, `orders/${orderId}/deliver`, { pin })
  t.equal(delivered.status, 200, 'the courier delivers with the PIN the recipient gives')
  t.match(await read(orderId), { status: 'delivered', courier: { id: rider.id }, proof_of_delivery: { pin_required: true, pin_verified: true } }, 'the business sees it delivered')
})
