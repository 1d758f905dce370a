import { randomUUID } from 'node:crypto'
import t from 'tap'
import { findOrdersWithoutOffer, findWaitingOrdersNear, ordersWaitingForCourier, type SweepCursor } from '../../../shared/db/dispatch-sweep.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { genericPlanOf, useTestDb } from '../../helpers/db.js'

// The dispatcher's sweep of orders without an offer (shared/db/dispatch-sweep.ts): it pages from
// where it stopped, so orders that wait for nobody in range never hide a newer one whose job was lost.

t.test('the sweep pages through every order without an offer, then starts over', async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  const orders: string[] = []
  for (let i = 0; i < 5; i++) orders.push(await seedOrder(sql, businessId))
  // Seconds apart, in the order made (two made in one millisecond would otherwise go by id).
  for (const [i, id] of orders.entries()) await sql`update orders set created_at = now() - make_interval(secs => ${10 - i}) where id = ${id}`
  await seedOrder(sql, businessId, false)

  const pages: string[][] = []
  let after: SweepCursor | null = null
  do {
    const page: SweepCursor[] = await findOrdersWithoutOffer(sql, 0, 60, 2, after)
    pages.push(page.map(({ id }) => id))
    after = page.length === 2 ? (page.at(-1) ?? null) : null
  } while (after && pages.length < 10)
  t.same(pages, [orders.slice(0, 2), orders.slice(2, 4), orders.slice(4)], 'three pages, oldest first, each order once, no test-mode order')
  t.same((await findOrdersWithoutOffer(sql, 0, 60, 2, null)).map(({ id }) => id), orders.slice(0, 2), 'and the next sweep starts over')
})

t.test("a placement's orders share one time: the cursor tells them apart by id", async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  for (let i = 0; i < 4; i++) await seedOrder(sql, businessId)
  await sql`update orders set created_at = (select min(created_at) from orders)`
  const first = await findOrdersWithoutOffer(sql, 0, 60, 3, null)
  const rest = await findOrdersWithoutOffer(sql, 0, 60, 3, first.at(-1) ?? null)
  const seen = [...first, ...rest].map(({ id }) => id)
  t.equal(seen.length, 4, 'four orders in two pages')
  t.equal(new Set(seen).size, 4, 'none of them twice')
})

t.test('a page is read from the index of orders waiting for a courier, from the cursor on', async (t) => {
  const { config } = await useTestDb(t)
  const after = { id: 'ORD-0000000000', createdAt: new Date().toISOString() }
  t.match(await genericPlanOf(t, config, (reads) => findOrdersWithoutOffer(reads, 2, 60, 200, after)), /"Index Name":"orders_waiting_for_courier"/)
})

t.test("a free courier's waiting orders leave out what they cannot carry before the page is cut", async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  const [van, heavy, bike, bikeBand] = [await seedOrder(sql, businessId), await seedOrder(sql, businessId), await seedOrder(sql, businessId), await seedOrder(sql, businessId)]
  // Older first: a van's rate-card order and a distance-priced load past a bike's 20 kg.
  await sql`update orders set vehicle_type = 'bus_van', created_at = now() - interval '3 minutes' where id = ${van}`
  await sql`update orders set pricing_model = 'distance', shipment = shipment || '{"weight": 30, "quantity": 1}', created_at = now() - interval '2 minutes' where id = ${heavy}`
  // Newest: a bike's rate-card order whose load is past 20 kg; its option's band priced it, so a bike may take it.
  await sql`update orders set shipment = shipment || '{"weight": 15, "quantity": 2}', created_at = now() + interval '1 minute' where id = ${bikeBand}`
  const near = { lat: 6.4413, lng: 3.4714 }
  const page = await findWaitingOrdersNear(sql, near, 10, { id: randomUUID(), vehicleType: 'bike', maxWeightKg: 20 }, 2)
  t.same(page, [bike, bikeBand], 'the orders a bike may carry, though two older ones wait: the weight limit is for distance-priced loads')
  const truck = await findWaitingOrdersNear(sql, near, 10, { id: randomUUID(), vehicleType: 'truck', maxWeightKg: 5000 }, 5)
  t.same(truck, [heavy], 'a truck: only the distance-priced load (the rate-card orders were priced for a van and a bike)')
})

t.test("the dispatcher's gauges: how many live orders wait, and how long the longest has since it last became created", async (t) => {
  const { sql } = await useTestDb(t)
  const { businessId } = await seedAccount(sql)
  t.same(await ordersWaitingForCourier(sql), { count: 0, oldestS: 0 }, 'none waiting: 0 and 0')
  const [handedBack, fresh] = [await seedOrder(sql, businessId), await seedOrder(sql, businessId)]
  await seedOrder(sql, businessId, false)
  // Placed 40 minutes ago and handed back 10 minutes ago: it has waited 10 minutes, not 40.
  await sql`update orders set created_at = now() - interval '40 minutes', history = jsonb_build_array(
    jsonb_build_object('status', 'created', 'at', now() - interval '40 minutes'),
    jsonb_build_object('status', 'assigned', 'at', now() - interval '35 minutes'),
    jsonb_build_object('status', 'created', 'at', now() - interval '10 minutes')) where id = ${handedBack}`
  await sql`update orders set history = jsonb_build_array(jsonb_build_object('status', 'created', 'at', now() - interval '1 minute')) where id = ${fresh}`
  const waiting = await ordersWaitingForCourier(sql)
  t.equal(waiting.count, 2, 'the two live orders; the test-mode one is no courier\'s')
  t.ok(waiting.oldestS >= 600 && waiting.oldestS < 660, `the longest wait is the hand-back's 10 minutes: ${waiting.oldestS} s`)
})
