import { Queue, Worker } from 'bullmq'
import t, { type Test } from 'tap'
import { OFF_SHIFT_REASON } from '../../../shared/courier.js'
import { DISPATCH_QUEUE, freeJob, offerJob, offerJobId, spread, type DispatchJob } from '../../../shared/dispatch/queue.js'
import { withDeadline } from '../../../shared/deadline.js'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { kmNorth, offersOf, onShift, pendingOffer, placeOrders, type TestCourier } from '../../helpers/couriers.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { waitForValue } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// A courier who becomes free (a delivery done, an offer declined, a shift begun, an order cancelled) is offered an
// order waiting near them at once, not at the order's next retry: the retry here is ten minutes,
// the deadline fifteen seconds.
const WAIT_MS = 15_000
const { db, gateway } = await startStack(t, { dispatcher: true, env: { DISPATCH_RETRY_S: '600', DISPATCH_OFFER_S: '600', COURIER_CAPACITY: '1' } })
const account = await seedAccount(db.sql, { balance: 1_000_000 })
const connection = createRedis(db.config, { maxRetriesPerRequest: null })
const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
t.teardown(async () => {
  await queue.close()
  connection.disconnect()
})

/** Takes a courier off shift: at a case's end, so the next case's orders are not offered to them. */
const offShift = (courier: TestCourier) => gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: courier.auth, payload: { status: 'offline' } })

/** A new order offered to `leaving` (the nearest, 0.5 km away), with `staying` on shift 2 km away to be offered it next. */
async function offeredWithNextInLine(t: Test, names: { leaving: string; staying: string }) {
  const leaving = await onShift(gateway, db.sql, names.leaving, kmNorth(ISLAND, 0.5))
  const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await pendingOffer(db.sql, orderId!)
  t.equal(offered?.courierId, leaving.id, 'the nearest courier is offered the order (for ten minutes)')
  const staying = await onShift(gateway, db.sql, names.staying, kmNorth(ISLAND, 2))
  return { leaving, staying, orderId: orderId!, offered: offered! }
}

/** Cancels a case's orders still waiting, so the next case's couriers are not offered them. */
async function cancel(orderIds: string[]) {
  for (const orderId of orderIds) await gateway.inject({ method: 'POST', url: `/v2/business/orders/${orderId}/cancel`, headers: bearer(account.apiKey) })
}

t.test('a delivery, a decline and a new shift each wake the orders waiting nearby', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Only Rider', kmNorth(ISLAND, 1))
  const [first] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await pendingOffer(db.sql, first!)
  t.equal(offered?.courierId, rider.id, 'the one courier is offered the first order')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offered!.id}/accept`, headers: rider.auth })).statusCode, 200)

  // The second order finds its only courier busy: it would wait its ten-minute retry.
  const [second] = await placeOrders(gateway, account.apiKey, [shipment()])
  t.equal(await pendingOffer(db.sql, second!, [], 1500), null, 'nobody is offered the second order while the courier is busy')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${first}/pickup`, headers: rider.auth })).statusCode, 200)
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${first}/deliver`, headers: rider.auth, payload: {} })).statusCode, 200)
  const woken = await pendingOffer(db.sql, second!, [], WAIT_MS)
  t.equal(woken?.courierId, rider.id, 'the delivery freed the courier, and the waiting order is offered to them at once')

  // Declined: the courier may take the next order waiting near them, at once.
  const [third] = await placeOrders(gateway, account.apiKey, [shipment()])
  t.equal(await pendingOffer(db.sql, third!, [], 1500), null, 'the third waits while the courier holds an offer')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${woken!.id}/decline`, headers: rider.auth, payload: { reason: 'too far' } })).statusCode, 204)
  const afterDecline = await pendingOffer(db.sql, third!, [], WAIT_MS)
  t.equal(afterDecline?.courierId, rider.id, 'after declining one, the courier is offered the next waiting order')
  t.same((await offersOf(db.sql, second!)).filter((offer) => offer.status === 'pending'), [], 'and not the one they declined: the woken round goes on, and they were asked in it')

  // A courier who begins a shift is offered the order left waiting (the second, declined by the first rider).
  const newcomer = await onShift(gateway, db.sql, 'Newcomer', kmNorth(ISLAND, 2))
  const forNewcomer = await pendingOffer(db.sql, second!, [woken!.id], WAIT_MS)
  t.equal(forNewcomer?.courierId, newcomer.id, 'going on shift wakes the orders waiting nearby')
  await cancel([second!, third!])
  for (const courier of [rider, newcomer]) await offShift(courier)
  const read = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${first}`, headers: bearer(account.apiKey) })
  t.equal(read.json().status, 'delivered')
})

t.test('a wake passes over the orders the courier already declined, to the next one waiting', async (t) => {
  // The wake looks at the few oldest orders near the courier: ones they declined must not fill it.
  const rider = await onShift(gateway, db.sql, 'Choosy Rider', kmNorth(ISLAND, 1))
  const decline = async (offer: { id: string } | null) => {
    t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer?.id}/decline`, headers: rider.auth, payload: {} })).statusCode, 204)
  }
  const [skipped] = await placeOrders(gateway, account.apiKey, [shipment()])
  await decline(await pendingOffer(db.sql, skipped!, [], WAIT_MS))
  const [held] = await placeOrders(gateway, account.apiKey, [shipment()])
  const holding = await pendingOffer(db.sql, held!, [], WAIT_MS)
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${holding!.id}/accept`, headers: rider.auth })).statusCode, 200, 'the courier takes the next order')
  // Two more wait while they are busy, each to its ten-minute retry; done, they are offered one of
  // them (the wake looks at both at once) and decline it. (The older of the two, with the declined
  // one, filled the wake's page of two before.)
  const both = [...await placeOrders(gateway, account.apiKey, [shipment()]), ...await placeOrders(gateway, account.apiKey, [shipment()])]
  for (const move of ['pickup', 'deliver']) t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${held}/${move}`, headers: rider.auth, payload: {} })).statusCode, 200)
  const offered = await waitForValue(async () => (await Promise.all(both.map((orderId) => pendingOffer(db.sql, orderId, [], 0)))).find(Boolean) ?? null, Boolean, WAIT_MS, 50)
  t.equal(offered.value?.courierId, rider.id, 'the delivery frees the courier for one of the two')
  await decline(offered.value)
  const waiting = both.find((orderId) => orderId !== offered.value?.orderId)!
  const next = await pendingOffer(db.sql, waiting, [], WAIT_MS)
  t.equal(next?.courierId, rider.id, 'the order after the two they declined is offered to them at once')
  await cancel([skipped!, ...both])
  await offShift(rider)
})

t.test("a business's cancel and an operator's free the courier they concern at once, as a delivery does", async (t) => {
  const rider = await onShift(gateway, db.sql, 'Freed Rider', kmNorth(ISLAND, 1))
  const accepted = async (orderId: string) => {
    const offered = await pendingOffer(db.sql, orderId, [], WAIT_MS)
    t.equal(offered?.courierId, rider.id, `${orderId} is offered to the one courier`)
    t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offered!.id}/accept`, headers: rider.auth })).statusCode, 200)
  }
  const waiting = async (what: string) => {
    const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
    const delayed = await waitForValue(async () => await (await queue.getJob(offerJobId(orderId!)))?.getState(), (state) => state === 'delayed', WAIT_MS, 50)
    t.equal(delayed.value, 'delayed', `${what}: the next order finds the courier busy and waits its ten-minute retry`)
    return orderId!
  }

  // The business cancels the order the courier holds.
  const [held] = await placeOrders(gateway, account.apiKey, [shipment()])
  await accepted(held!)
  const second = await waiting('holding an order')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/business/orders/${held}/cancel`, headers: bearer(account.apiKey) })).statusCode, 200)
  const afterCancel = await pendingOffer(db.sql, second, [], WAIT_MS)
  t.equal(afterCancel?.courierId, rider.id, "the business's cancel freed the courier, and the waiting order is offered to them")

  // The business cancels the order the courier is offered: the withdrawal frees them too.
  const third = await waiting('holding an offer')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/business/orders/${second}/cancel`, headers: bearer(account.apiKey) })).statusCode, 200)
  await accepted(third)

  // The operator cancels from the CLI the order the courier holds.
  const fourth = await waiting('holding an order again')
  const cancelled = await runOperatorCli(db, ['order:cancel', '--order', third, '--reason', 'the shop closed'])
  t.equal(cancelled.code, 0, cancelled.stderr)
  t.equal(cancelled.json?.status, 'cancelled')
  const afterOperator = await pendingOffer(db.sql, fourth, [], WAIT_MS)
  t.equal(afterOperator?.courierId, rider.id, "the operator's cancel freed the courier, and the waiting order is offered to them")
  await cancel([fourth])
  await offShift(rider)
})

t.test('a courier who goes off shift with an offer pending lets it go: the order goes on to the next courier at once', async (t) => {
  const { leaving, staying, orderId, offered } = await offeredWithNextInLine(t, { leaving: 'Leaving Rider', staying: 'Staying Rider' })
  t.equal((await offShift(leaving)).statusCode, 200)
  const [closed] = await db.sql<{ status: string; reason: string | null }[]>`select status, reason from dispatch_offers where id = ${offered.id}`
  t.same(closed, { status: 'declined', reason: OFF_SHIFT_REASON }, 'their offer is declined for them, saying why')
  const next = await pendingOffer(db.sql, orderId, [offered.id], WAIT_MS)
  t.equal(next?.courierId, staying.id, 'and the order is offered to the next courier, not left to the offer\'s ten minutes')
  await cancel([orderId])
  await offShift(staying)
})

t.test("an offer let go brings forward the order's job even when one waits delayed to a retry", async (t) => {
  // A look that found nobody while the placement's own look made the offer leaves the order a
  // job delayed to its retry; a plain add of the next look would be absorbed by it.
  const { leaving, staying, orderId, offered } = await offeredWithNextInLine(t, { leaving: 'Leaving Again', staying: 'Staying Again' })
  // Their shift's wake has looked (the order is offered already) before the delayed job is made.
  await waitForValue(() => queue.getJobCounts('wait', 'prioritized', 'active'), (counts) => Object.values(counts).every((n) => n === 0), WAIT_MS, 50)
  await waitForValue(() => queue.getJob(offerJobId(orderId)), (job) => job === undefined, WAIT_MS, 50)
  await queue.add(...spread(offerJob(orderId, 600_000)))
  t.equal(await (await queue.getJob(offerJobId(orderId)))?.getState(), 'delayed', "the order's job waits its ten-minute retry")
  t.equal((await offShift(leaving)).statusCode, 200)
  const next = await pendingOffer(db.sql, orderId, [offered.id], WAIT_MS)
  t.equal(next?.courierId, staying.id, 'the order goes on to the next courier at once, not at the retry')
  await cancel([orderId])
  await offShift(staying)
})

t.test('disabling couriers sends their assigned and their offered order to the next courier at once, past jobs delayed to a retry', async (t) => {
  const holding = await onShift(gateway, db.sql, 'Holding Rider', kmNorth(ISLAND, 0.5))
  const [held] = await placeOrders(gateway, account.apiKey, [shipment()])
  const accepted = await pendingOffer(db.sql, held!)
  t.equal(accepted?.courierId, holding.id)
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${accepted!.id}/accept`, headers: holding.auth })).statusCode, 200, 'one courier holds an order')
  const offeredTo = await onShift(gateway, db.sql, 'Offered Rider', kmNorth(ISLAND, 0.6))
  const [offered] = await placeOrders(gateway, account.apiKey, [shipment()])
  const pending = await pendingOffer(db.sql, offered!)
  t.equal(pending?.courierId, offeredTo.id, 'another is offered one (for ten minutes)')

  // Each order's job waits its ten-minute retry: the sweep's add would be absorbed by it.
  for (const orderId of [held!, offered!]) {
    await waitForValue(() => queue.getJob(offerJobId(orderId)), (job) => job === undefined, WAIT_MS, 50)
    await queue.add(...spread(offerJob(orderId, 600_000)))
  }
  const next = await onShift(gateway, db.sql, 'Next Rider', kmNorth(ISLAND, 2))
  const other = await onShift(gateway, db.sql, 'Other Rider', kmNorth(ISLAND, 2.5))
  const disabled = await Promise.all([holding, offeredTo].map((courier) => runOperatorCli(db, ['courier:disable', '--courier', courier.id])))
  t.same(disabled.map(({ code, json }) => [code, json?.handed_back]), [[0, [held]], [0, []]], 'the holder hands back their order')
  const [heldAgain, offeredAgain] = await Promise.all([pendingOffer(db.sql, held!, [], WAIT_MS), pendingOffer(db.sql, offered!, [pending!.id], WAIT_MS)])
  t.ok(heldAgain && [next.id, other.id].includes(heldAgain.courierId), 'the handed-back order is offered again')
  t.ok(offeredAgain && [next.id, other.id].includes(offeredAgain.courierId), 'and so is the one whose offer was withdrawn')
  await cancel([held!, offered!])
  for (const courier of [next, other]) await offShift(courier)
})

t.test('a courier come free is woken for an order they may carry, past older ones for another vehicle', async (t) => {
  // Two truck orders, then a bike order: nobody on shift, so all three wait their ten-minute retry.
  const truck = { vehicle_type: 'truck', option_id: account.options['5-tonne truck'], weight: 100 }
  const trucks = await placeOrders(gateway, account.apiKey, [shipment(truck), shipment(truck)])
  const [bikeOrder] = await placeOrders(gateway, account.apiKey, [shipment()])
  const delayed = await waitForValue(async () => await (await queue.getJob(offerJobId(bikeOrder!)))?.getState(), (state) => state === 'delayed', WAIT_MS, 50)
  t.equal(delayed.value, 'delayed', 'the bike order found nobody and waits for its retry')

  // A bike courier begins a shift: with COURIER_CAPACITY 1 a wake looks at two orders, and the
  // two oldest near them are trucks' (no bike may carry them).
  const rider = await onShift(gateway, db.sql, 'Bike come free', kmNorth(ISLAND, 1))
  const offered = await pendingOffer(db.sql, bikeOrder!, [], WAIT_MS)
  t.equal(offered?.courierId, rider.id, 'the bike order is offered to them at once')
  await cancel([...trucks, bikeOrder!])
  await offShift(rider)
})

t.test('a burst of couriers coming free never holds back a new order\'s offer', async (t) => {
  // A wave of wakes, as when a shift starts for thousands of riders or a dispatcher comes back
  // after an outage: each is cheap, but in one queue with the orders' offers they would go first.
  const rider = await onShift(gateway, db.sql, 'Burst Rider', kmNorth(ISLAND, 1))
  const BURST = 20_000
  for (let start = 0; start < BURST; start += 5000) {
    await queue.addBulk(Array.from({ length: 5000 }, (_, i) => freeJob(`crr_burst${start + i}`)))
  }
  const [order] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offered = await pendingOffer(db.sql, order!, [], WAIT_MS)
  const counts = await queue.getJobCounts('wait', 'prioritized')
  t.equal(offered?.courierId, rider.id, 'the new order is offered to the courier nearby')
  t.ok((counts.wait ?? 0) + (counts.prioritized ?? 0) > 0, `the order went ahead of the wakes still queued (${JSON.stringify(counts)})`)
  // What is left of the burst goes, so it spends no more of the machine.
  await queue.drain()
  await offShift(rider)
})

t.test("a wake that fails does not swallow the courier's next one", async (t) => {
  // A queue of its own, so the stack's dispatcher does not take these jobs.
  const prefix = `${db.config.QUEUE_PREFIX}-wakes`
  const wakes = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix })
  const workerConnection = createRedis(db.config, { maxRetriesPerRequest: null })
  const failing = new Worker<DispatchJob>(DISPATCH_QUEUE, async () => {
    throw new Error('Postgres went away')
  }, { connection: workerConnection, prefix })
  t.teardown(async () => {
    await failing.close()
    workerConnection.disconnect()
    await wakes.obliterate({ force: true })
    await wakes.close()
  })
  const courierId = '00000000-0000-4000-8000-0000000fa11d'
  const failed = new Promise((resolve) => failing.once('failed', resolve))
  await wakes.add(...spread(freeJob(courierId)))
  // Bounded: a worker that never takes the job would otherwise hang the file until tap's timeout.
  t.ok(await withDeadline(failed, WAIT_MS).then(() => true, () => false), 'the worker took the wake and it failed')
  await failing.pause()
  const again = await wakes.add(...spread(freeJob(courierId)))
  t.equal(await again.getState(), 'prioritized', 'the next wake is queued, not absorbed by the failed one')
})
