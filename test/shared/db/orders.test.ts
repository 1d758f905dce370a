import t from 'tap'
import type { OrderStatus } from '../../../shared/courier.js'
import { listOrders } from '../../../shared/db/orders.js'
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
