import t from 'tap'
import { disableCourier } from '../../../shared/couriers/accounts.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { closeOffer, insertOffer } from '../../../shared/db/offers.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { offerNext, type DispatchSettings } from '../../../shared/dispatch/dispatch.js'
import { newOfferId } from '../../../shared/ids.js'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { assertLedgersOf, holdLock, lockWaiters } from '../../helpers/db.js'
import { waitForValue } from '../../helpers/processes.js'
import { kmNorth, onShift, placeOrders, type TestCourier } from '../../helpers/couriers.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// Races of dispatch (DESIGN 14, 17.1): whatever runs at once, an order is assigned once, to one
// courier, and a courier never holds two offers or more orders than COURIER_CAPACITY. Each race
// runs 50 times. Accepts and cancels go through the gateway's routes; the dispatcher's step
// (offerNext) is called directly, as its jobs would call it, with no dispatcher service running
// so nothing but the race touches the orders.
const ROUNDS = 50
const { db, gateway } = await startStack(t, { env: { COURIER_CAPACITY: '1' } })
const account = await seedAccount(db.sql, { balance: 10_000_000 })
const redis = createRedis(db.config, { maxRetriesPerRequest: 1 })
t.teardown(() => redis.disconnect())
const settings: DispatchSettings = { radiusKm: 10, offerS: 600, maxOffers: 5, retryS: 1, capacity: 1, staleS: 600 }
const dispatchStep = (orderId: string) => offerNext(db.sql, redis, db.config.QUEUE_PREFIX, settings, orderId, null)

const accept = (courier: TestCourier, offerId: string) => gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offerId}/accept`, headers: courier.auth })
const offDuty = (courier: TestCourier) => gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: courier.auth, payload: { status: 'offline' } })
const cancel = (orderId: string) => gateway.inject({ method: 'POST', url: `/v2/business/orders/${orderId}/cancel`, headers: bearer(account.apiKey) })

/** `count` live orders from the Island, placed 50 to a placement. */
async function orders(count: number): Promise<string[]> {
  const ids: string[] = []
  while (ids.length < count) ids.push(...(await placeOrders(gateway, account.apiKey, Array.from({ length: Math.min(50, count - ids.length) }, () => shipment()))))
  return ids
}

async function eventTypes(orderId: string): Promise<string[]> {
  return (await db.sql<{ type: string }[]>`select type from events where order_id = ${orderId} order by sequence`).map((event) => event.type)
}

t.test('two couriers accepting at once, one of them twice: the owner wins once, both its accepts answer the order, one order.assigned', async (t) => {
  const first = await onShift(gateway, db.sql, 'First', kmNorth(ISLAND, 0.5))
  const second = await onShift(gateway, db.sql, 'Second', kmNorth(ISLAND, 0.6))
  const losses = new Map<string, number>()
  for (const orderId of await orders(ROUNDS)) {
    // The second courier was offered the order before, and let it expire; now it is the first's.
    const stale = await insertOffer(db.sql, { id: newOfferId(), orderId, courierId: second.id, offerS: 600 })
    await closeOffer(db.sql, stale!.id, 'expired', null)
    const offer = await insertOffer(db.sql, { id: newOfferId(), orderId, courierId: first.id, offerS: 600 })
    const answers = await Promise.all([accept(first, offer!.id), accept(second, offer!.id), accept(first, offer!.id), accept(second, stale!.id)])
    // The first courier's two accepts (a double tap) both answer with the order they now hold.
    const [mine, , again] = answers
    if (mine!.statusCode !== 200 || again!.statusCode !== 200) t.fail(`round ${orderId}: the owner's accepts answered ${mine!.statusCode} and ${again!.statusCode}: ${again!.body}`)
    else if (mine!.json().order_id !== orderId || again!.json().order_id !== orderId) t.fail(`round ${orderId}: the accepts answered other orders`)
    for (const answer of [answers[1]!, answers[3]!].filter((answer) => answer.statusCode !== 200)) {
      const key = `${answer.statusCode} ${String(answer.json().message).replace(/off_\w+/, 'off_…')}`
      losses.set(key, (losses.get(key) ?? 0) + 1)
    }
    const [order] = await db.sql`select status, courier_id from orders where id = ${orderId}`
    if (order!.status !== 'assigned' || order!.courierId !== first.id) t.fail(`${orderId} is ${order!.status} with ${order!.courierId}`)
    const types = await eventTypes(orderId)
    if (types.filter((type) => type === 'order.assigned').length !== 1) t.fail(`${orderId} has events ${types.join(', ')}`)
  }
  t.same(Object.fromEntries(losses), {
    "404 Offer off_… was not found": ROUNDS,
    "409 Offer off_… has expired": ROUNDS,
  }, 'the losers: the other courier cannot take an offer not theirs (404), nor an expired offer (409)')
  const [assigned] = await db.sql`select count(*)::int as count from orders where courier_id = ${first.id} and status = 'assigned'`
  t.equal(assigned!.count, ROUNDS, 'every order went to the courier whose offer it was')
  await Promise.all([offDuty(first), offDuty(second)])
})

t.test('two orders dispatched at once to one courier: never two pending offers, never two orders held', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Only rider', kmNorth(ISLAND, 0.5))
  const ids = await orders(ROUNDS * 2)
  let extraOffers = 0
  for (let round = 0; round < ROUNDS; round++) {
    const pair = [ids[2 * round]!, ids[2 * round + 1]!]
    const steps = await Promise.all(pair.map(dispatchStep))
    const offered = steps.filter((step) => step.kind === 'offered')
    if (offered.length !== 1) t.fail(`round ${round}: ${offered.length} offers (${steps.map((step) => step.kind).join(', ')})`)
    const [pending] = await db.sql`select count(*)::int as count from dispatch_offers where courier_id = ${rider.id} and status = 'pending'`
    if (pending!.count > 1) t.fail(`round ${round}: the courier holds ${pending!.count} pending offers`)

    // The courier accepts while the other order is dispatched again: the one they hold fills them.
    const step = offered[0]
    if (step?.kind !== 'offered') continue
    const other = pair.find((orderId) => orderId !== step.offer.orderId)!
    const [accepted, again] = await Promise.all([accept(rider, step.offer.id), dispatchStep(other)])
    if (accepted.statusCode !== 200) t.fail(`round ${round}: accept answered ${accepted.statusCode} ${accepted.body}`)
    if (again.kind === 'offered') {
      extraOffers++
      await accept(rider, again.offer.id)
    }
    const [held] = await db.sql`select count(*)::int as count from orders where courier_id = ${rider.id} and status in ('assigned', 'picked_up', 'failed')`
    if (held!.count > 1) t.fail(`round ${round}: the courier holds ${held!.count} orders with COURIER_CAPACITY=1`)
    // Done with this pair: the courier is free for the next round.
    for (const orderId of pair) await cancel(orderId)
  }
  t.equal(extraOffers, 0, 'a courier holding an order at capacity is never offered another')
  const [twice] = await db.sql`select count(*)::int as count from (select order_id from dispatch_offers where status = 'accepted' group by order_id having count(*) > 1) twice`
  t.equal(twice!.count, 0, 'no order accepted twice')
  await offDuty(rider)
})

t.test('a dispatch step that saw the courier free is not let through after they accepted another order', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Quick rider', kmNorth(ISLAND, 0.5))
  const [late, taken] = await orders(2)
  // The step for `late` reads the courier free, then waits for the order's lock (held here, as a
  // cancel or a slow transaction would): meanwhile the courier is offered `taken` and accepts it.
  const held = await holdLock(db.sql, (tx) => tx`select id from orders where id = ${late!} for update`)
  const lateStep = dispatchStep(late!)
  const blocked = await waitForValue(() => lockWaiters(db.sql, held.pid), (waiters) => waiters.length > 0, 10_000)
  t.ok(blocked.held, 'the step waits on the order lock')
  const step = await dispatchStep(taken!)
  t.equal(step.kind, 'offered')
  if (step.kind === 'offered') t.equal((await accept(rider, step.offer.id)).statusCode, 200)
  await held.release()
  const after = await lateStep
  t.not(after.kind, 'offered', `the full courier is not offered the other order (${after.kind === 'offered' ? after.offer.id : after.kind})`)
  const [pending] = await db.sql`select count(*)::int as count from dispatch_offers where courier_id = ${rider.id} and status = 'pending'`
  t.equal(pending!.count, 0, 'the courier holds no offer beyond their order')
  for (const orderId of [late!, taken!]) await cancel(orderId)
  await offDuty(rider)
})

t.test('a dispatch step that saw the courier enabled makes no offer once they are disabled', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Leaving rider', kmNorth(ISLAND, 0.5))
  const [late] = await orders(1)
  // The step reads the courier as a candidate, then waits for the order's lock while an operator
  // disables them: the disable finds no offer to withdraw, so the step must not make one after it.
  const held = await holdLock(db.sql, (tx) => tx`select id from orders where id = ${late!} for update`)
  const lateStep = dispatchStep(late!)
  t.ok((await waitForValue(() => lockWaiters(db.sql, held.pid), (waiters) => waiters.length > 0, 10_000)).held, 'the step waits on the order lock')
  t.equal((await disableCourier(db.sql, 'test', rider.id)).kind, 'disabled')
  await held.release()
  const after = await lateStep
  t.not(after.kind, 'offered', `the disabled courier is not offered the order (${after.kind})`)
  const offers = await db.sql`select status from dispatch_offers where courier_id = ${rider.id}`
  t.same(offers, [], 'no offer of any kind was made to them')
  await cancel(late!)
})

t.test('an accept racing a cancel: the order ends cancelled, assigned at most once, refunded once', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Racer', kmNorth(ISLAND, 0.5))
  const outcomes = new Map<string, number>()
  for (const orderId of await orders(ROUNDS)) {
    const offer = await insertOffer(db.sql, { id: newOfferId(), orderId, courierId: rider.id, offerS: 600 })
    const [accepted, cancelled] = await Promise.all([accept(rider, offer!.id), cancel(orderId)])
    const key = `accept ${accepted.statusCode}, cancel ${cancelled.statusCode}`
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
    if (cancelled.statusCode !== 200) t.fail(`${orderId}: cancel answered ${cancelled.statusCode} ${cancelled.body}`)
    const [row] = await db.sql`select o.status, o.courier_id, d.status as offer_status from orders o join dispatch_offers d on d.order_id = o.id where o.id = ${orderId}`
    const types = await eventTypes(orderId)
    const expected = accepted.statusCode === 200
      ? { offer: 'accepted', events: ['order.created', 'order.assigned', 'order.cancelled'] }
      : { offer: 'withdrawn', events: ['order.created', 'order.cancelled'] }
    if (accepted.statusCode !== 200 && !(accepted.statusCode === 409 && /was withdrawn/.test(accepted.body))) t.fail(`${orderId}: accept answered ${accepted.statusCode} ${accepted.body}`)
    if (row!.status !== 'cancelled' || row!.offerStatus !== expected.offer || JSON.stringify(types) !== JSON.stringify(expected.events)) {
      t.fail(`${orderId}: ${row!.status}, offer ${row!.offerStatus}, events ${types.join(', ')} after ${key}`)
    }
    const [refunds] = await db.sql`select count(*)::int as count from ledger_entries where order_id = ${orderId} and kind = 'refund'`
    if (refunds!.count !== 1) t.fail(`${orderId}: ${refunds!.count} refunds`)
  }
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`)
  t.equal([...outcomes.values()].reduce((sum, count) => sum + count, 0), ROUNDS, 'every round ended in one of the two orders of events')
  t.ok([...outcomes.keys()].every((key) => key === 'accept 200, cancel 200' || key === 'accept 409, cancel 200'), 'and no other answers')
  await assertLedgersOf(t, db.sql, [account.businessId])
})

t.test('one order looked at twice at once (a wake read it just before its offer committed): one offer, and the other look stops', async (t) => {
  const riders = await Promise.all(['First', 'Second', 'Third'].map((name, i) => onShift(gateway, db.sql, `${name} rider`, kmNorth(ISLAND, 0.5 + i))))
  const ids = await orders(ROUNDS)
  const seen: Record<string, number> = {}
  for (const [round, orderId] of ids.entries()) {
    const steps = await Promise.all([dispatchStep(orderId), dispatchStep(orderId)])
    for (const step of steps) {
      const kind = step.kind === 'not_needed' ? `not_needed ${step.why}` : step.kind
      seen[kind] = (seen[kind] ?? 0) + 1
    }
    // Asked again later, while the offer is out: left to that offer's accept, decline or expiry.
    const again = await dispatchStep(orderId)
    if (again.kind !== 'not_needed' || again.why !== 'offer_pending') t.fail(`round ${round}: asked again, ${JSON.stringify(again)}`)
    await cancel(orderId)
  }
  // Before, the other look went down the couriers, one transaction each, every insert turned away by
  // the order's own pending offer, and ended `nobody`: the order then waited a retry it did not need.
  t.same(seen, { offered: ROUNDS, 'not_needed offer_pending': ROUNDS }, 'each order offered once; the other look of each pair saw the offer and stopped')
  const [offers] = await db.sql`select count(*)::int as count from dispatch_offers where order_id = any(${ids})`
  t.equal(offers!.count, ROUNDS, 'one offer an order')
  for (const rider of riders) await offDuty(rider)
})

t.test('an operator giving a courier an order while they accept another of the same business: no deadlock, each order assigned once', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Hand and offer', kmNorth(ISLAND, 0.4))
  const row = await findCourier(db.sql, rider.id)
  if (!row) throw new Error('the rider was not made')
  const outcomes = new Map<string, number>()
  const ids = await orders(ROUNDS * 2)
  for (let round = 0; round < ROUNDS; round++) {
    const [handed, offered] = [ids[2 * round]!, ids[2 * round + 1]!]
    const offer = await insertOffer(db.sql, { id: newOfferId(), orderId: offered, courierId: rider.id, offerS: 600 })
    // The operator's assignment (the CLI's step) and the rider's accept, at once: both take the
    // business's event counter at commit, and the assignment withdraws the rider's offer.
    const [given, accepted] = await Promise.all([
      changeOrder(db.sql, { orderId: handed, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(row), reason: null }, { actor: 'race-test' }),
      accept(rider, offer!.id),
    ])
    const key = `assignment ${given.kind}, accept ${accepted.statusCode}`
    outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
    const held = await db.sql<{ id: string }[]>`select id from orders where courier_id = ${rider.id} and status = 'assigned' order by id`
    // The accept won the offer before the assignment could withdraw it: the rider holds both, by
    // the operator's choice; else the offer was withdrawn and the rider holds the one given.
    const expected = accepted.statusCode === 200 ? [handed, offered].sort() : [handed]
    if (given.kind !== 'changed' || JSON.stringify(held.map((order) => order.id)) !== JSON.stringify(expected)) {
      t.fail(`round ${round}: ${key}, holds ${JSON.stringify(held)}: ${accepted.body}`)
    }
    for (const orderId of [handed, offered]) await cancel(orderId)
  }
  t.pass(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`)
  t.notOk([...outcomes.keys()].some((key) => key.includes('accept 5')), 'no accept failed on a deadlock')
  await offDuty(rider)
})
