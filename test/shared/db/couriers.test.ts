import { randomUUID } from 'node:crypto'
import t from 'tap'
import { HELD_STATUSES } from '../../../shared/courier.js'
import { findCouriersWithCode } from '../../../shared/db/courier-logins.js'
import {
  countActiveOrders, findActiveOrderIdsOfCourier, findActiveOrdersOfCouriers, findDispatchCandidates, findEnabledCourierByPhone, findHeldOrdersOfCourier,
} from '../../../shared/db/couriers.js'
import { genericPlanOf, useTestDb } from '../../helpers/db.js'

// The courier queries of shared/db/couriers.ts (migrations 00015 and 00033): the orders a courier
// holds are read from the partial index `orders_courier_active`, whose predicate is HELD_STATUSES,
// and enabled couriers are found by phone from their own index, even by a prepared statement's
// generic plan, so neither walks a table that grows with the company.
const quoted = (list: string) => [...list.matchAll(/'([a-z_]+)'/g)].map((match) => match[1])

t.test('the partial index of held orders has the statuses of HELD_STATUSES', async (t) => {
  const { sql } = await useTestDb(t)
  const [index] = await sql<{ def: string }[]>`select pg_get_indexdef(indexrelid) as def from pg_index where indexrelid = 'orders_courier_active'::regclass`
  t.ok(index, 'the index exists')
  t.same(quoted(index!.def.split(' WHERE ')[1] ?? ''), [...HELD_STATUSES])
})

t.test("every held-orders query reads the couriers' orders from that index", async (t) => {
  const { config } = await useTestDb(t)
  const ids = [randomUUID(), randomUUID()]
  const held = /"Index Name":"orders_courier_active"/
  t.match(await genericPlanOf(t, config, (reads) => findActiveOrderIdsOfCourier(reads, ids[0]!)), held, 'one courier\'s order ids')
  t.match(await genericPlanOf(t, config, (reads) => findHeldOrdersOfCourier(reads, ids[0]!)), held, 'one courier\'s orders whole')
  t.match(await genericPlanOf(t, config, (reads) => countActiveOrders(reads, ids)), held, 'how many each courier holds')
  t.match(await genericPlanOf(t, config, (reads) => findActiveOrdersOfCouriers(reads, ids)), held, 'the couriers page')
  t.match(await genericPlanOf(t, config, (reads) => findDispatchCandidates(reads, ids)), held, 'dispatch\'s candidates')
})

t.test('enabled couriers are found by phone from an index, shared phones included', async (t) => {
  const { sql, config } = await useTestDb(t)
  const [alone, first, second, disabled] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
  await sql`
    insert into couriers (id, name, phone, vehicle_type, max_weight_kg, phone_shared_with, disabled_at, created_at) values
      (${alone}, 'Alone', '+2348090000001', 'bike', 20, null, null, now()),
      (${first}, 'First', '+2348090000002', 'bike', 20, ${second}, null, now() - interval '1 day'),
      (${second}, 'Second', '+2348090000002', 'car', 200, ${first}, null, now()),
      (${disabled}, 'Gone', '+2348090000003', 'bike', 20, null, now(), now())`
  t.equal((await findEnabledCourierByPhone(sql, '+2348090000001'))?.id, alone, 'the one courier with it')
  t.equal((await findEnabledCourierByPhone(sql, '+2348090000002'))?.id, first, 'of two sharing it, the oldest')
  t.equal(await findEnabledCourierByPhone(sql, '+2348090000003'), null, 'a disabled courier\'s phone: no one')

  const byPhone = /"Index Name":"couriers_phone_lookup"/
  t.match(await genericPlanOf(t, config, (reads) => findEnabledCourierByPhone(reads, '+2348090000002')), byPhone, 'the holder of a phone')
  t.match(await genericPlanOf(t, config, (reads) => findCouriersWithCode(reads, '+2348090000002')), byPhone, 'the login\'s couriers with a live code')
})
