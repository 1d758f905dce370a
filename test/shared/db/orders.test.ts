import t from 'tap'
import type { OrderStatus } from '../../../shared/courier.js'
import { listOrders, type OrderFilter } from '../../../shared/db/orders.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { genericPlanOf, useTestDb } from '../../helpers/db.js'

// GET /v2/business/orders?status=… (shared/db/orders.ts, migrations 00005 and 00030): statuses
// a partial index holds apart (the open ones; cancelled and returned) are read through it, even by
// a prepared statement's generic plan, so a status the business has few of does not make the list
// walk every order it ever had. Delivered, the common end, is read newest first as before.

t.test('orders by status: the right rows newest first, a rare status read from its own index', async (t) => {
  const { sql, config } = await useTestDb(t)
  const account = await seedAccount(sql, { card: null })
  const scope = { businessId: account.businessId, livemode: true }
  // 3000 orders a minute apart, newest last: delivered but for a cancellation, a return and two open ones.
  const first = await seedOrder(sql, account.businessId)
  await sql`
    insert into orders (id, placement_id, business_id, position, price, currency, pricing_model, delivery_mode, distance_km, shipment,
      created_at, livemode, status, vehicle_type, history, updated_at, option_label, from_zone_name, to_zone_name)
    select 'ORD-T' || lpad(n::text, 5, '0'), placement_id, business_id, n, price, currency, pricing_model, delivery_mode, distance_km, shipment,
      now() - make_interval(mins => 3000 - n), livemode,
      case n when 1000 then 'cancelled' when 2000 then 'returned' when 2990 then 'created' when 2995 then 'assigned' else 'delivered' end, vehicle_type, history, now(),
      option_label, from_zone_name, to_zone_name
    from orders, generate_series(1, 3000) n where id = ${first}`
  await sql`delete from orders where id = ${first}`
  await sql`analyze orders`

  const list = (statuses: OrderStatus[] | null, limit = 21) =>
    listOrders(sql, scope, { statuses, placementId: null, createdGte: null, createdLt: null, after: null, limit })
  const ids = async (statuses: OrderStatus[] | null, limit?: number) => (await list(statuses, limit)).map((order) => [order.id, order.status])
  t.same(await ids(['cancelled']), [['ORD-T01000', 'cancelled']], 'the one cancellation')
  t.same(await ids(['cancelled', 'returned']), [['ORD-T02000', 'returned'], ['ORD-T01000', 'cancelled']], 'both, newest first')
  t.same(await ids(['created', 'assigned', 'picked_up']), [['ORD-T02995', 'assigned'], ['ORD-T02990', 'created']], 'the open ones')
  t.same(await ids(['delivered', 'returned'], 3), [['ORD-T03000', 'delivered'], ['ORD-T02999', 'delivered'], ['ORD-T02998', 'delivered']], 'a common status among them: a page at once')
  t.equal((await list(null, 100)).length, 100, 'no filter: a full page')
  t.same(await listOrders(sql, { ...scope, livemode: false }, { statuses: ['cancelled'], placementId: null, createdGte: null, createdLt: null, after: null, limit: 21 }), [], 'not in the other mode')

  const planOf = (statuses: OrderStatus[]) => genericPlanOf(t, config, (reads) =>
    listOrders(reads, scope, { statuses, placementId: null, createdGte: null, createdLt: null, after: null, limit: 21 }))
  t.match(await planOf(['cancelled']), /"Index Name":"orders_ended_early"/, 'cancelled: read from the index of orders that ended early')
  t.match(await planOf(['returned', 'cancelled']), /"Index Name":"orders_ended_early"/, 'and both together')
  t.match(await planOf(['created']), /"Index Name":"orders_open"/, 'an open status: read from the open orders')
  const delivered = await planOf(['delivered', 'cancelled'])
  t.match(delivered, /"Index Name":"orders_by_business"/, 'with delivered among them: newest first on the business\'s index, a page a few rows away')
  t.notMatch(delivered, /orders_ended_early|orders_open/)
})

t.test('the operator\'s view across businesses: newest first over all of them, each read from its own index', async (t) => {
  const { sql, config } = await useTestDb(t)
  const accounts = [await seedAccount(sql, { card: null }), await seedAccount(sql, { card: null }), await seedAccount(sql, { card: null })]
  const firsts = [await seedOrder(sql, accounts[0]!.businessId), await seedOrder(sql, accounts[1]!.businessId), await seedOrder(sql, accounts[2]!.businessId)]
  // 300 orders a minute apart, the three businesses in turn; every tenth is cancelled; the last three are test orders.
  await sql`
    insert into orders (id, placement_id, business_id, position, price, currency, pricing_model, delivery_mode, distance_km, shipment,
      created_at, livemode, status, vehicle_type, history, updated_at, option_label, from_zone_name, to_zone_name)
    select 'ORD-X' || lpad(n::text, 5, '0'), placement_id, business_id, n, price, currency,
      pricing_model, delivery_mode, distance_km, shipment, now() - make_interval(mins => 300 - n), n <= 297,
      case when n % 10 = 0 then 'cancelled' else 'delivered' end, vehicle_type, history, now(), option_label, from_zone_name, to_zone_name
    from generate_series(1, 300) n join orders on id = (${firsts}::text[])[n % 3 + 1]`
  await sql`delete from orders where id = any(${firsts})`
  await sql`analyze orders`

  const filter = { statuses: null, placementId: null, createdGte: null, createdLt: null, after: null, limit: 5 }
  const across = (more: Partial<OrderFilter> = {}, livemode = true) => listOrders(sql, { businessId: null, livemode }, { ...filter, ...more })
  const page = await across()
  t.same(page.map((order) => order.id), ['ORD-X00297', 'ORD-X00296', 'ORD-X00295', 'ORD-X00294', 'ORD-X00293'], 'the newest live orders, whoever placed them')
  t.same(new Set(page.map((order) => order.businessId)).size, 3, 'of all three businesses')
  const last = page.at(-1)!
  t.same((await across({ after: { createdAt: last.createdAt, id: last.id } })).map((order) => order.id),
    ['ORD-X00292', 'ORD-X00291', 'ORD-X00290', 'ORD-X00289', 'ORD-X00288'], 'the next page starts after the cursor')
  t.same((await across({ statuses: ['cancelled'] })).map((order) => order.id), ['ORD-X00290', 'ORD-X00280', 'ORD-X00270', 'ORD-X00260', 'ORD-X00250'], 'a rare status')
  t.same((await across({ statuses: ['delivered'], createdLt: last.createdAt })).map((order) => order.id),
    ['ORD-X00292', 'ORD-X00291', 'ORD-X00289', 'ORD-X00288', 'ORD-X00287'], 'a common status, before a time')
  t.same((await across({}, false)).map((order) => order.id), ['ORD-X00300', 'ORD-X00299', 'ORD-X00298'], 'test orders apart')
  t.same((await listOrders(sql, { businessId: accounts[1]!.businessId, livemode: true }, filter)).map((order) => order.id),
    ['ORD-X00295', 'ORD-X00292', 'ORD-X00289', 'ORD-X00286', 'ORD-X00283'], 'one business chosen: its own')

  const plan = await genericPlanOf(t, config, (reads) => listOrders(reads, { businessId: null, livemode: true }, filter))
  t.match(plan, /"Relation Name":"businesses"/, 'business by business')
  t.match(plan, /"Index Name":"orders_by_business","Relation Name":"orders"[^}]*"Index Cond":"\(\(business_id = b\.id\)/, 'each from its own index')
})
