import t from 'tap'
import { useTestDb } from '../helpers/db.js'

t.test('migrations create the schema with the wallet guard', async (t) => {
  const { sql } = await useTestDb(t)
  const tables = await sql<{ tableName: string }[]>`
    select table_name from information_schema.tables where table_schema = current_schema() order by table_name`
  t.ok(tables.map((row) => row.tableName).includes('wallets'))
  const [business] = await sql`insert into businesses (id, name, phone, address, state, currency) values (gen_random_uuid(), 'A', '1', 'x', 'Lagos', 'NGN') returning id`
  await sql`insert into wallets (business_id, balance, currency) values (${business.id}, 0, 'NGN')`
  await t.rejects(sql`update wallets set balance = balance - 1 where business_id = ${business.id}`, { code: '23514' })
})

t.test('an order belongs to its placement\'s business, checked by one foreign key', async (t) => {
  const { sql } = await useTestDb(t)
  const business = async (name: string) => (await sql<{ id: string }[]>`
    insert into businesses (id, name, phone, address, state, currency) values (gen_random_uuid(), ${name}, '1', 'x', 'Lagos', 'NGN') returning id`)[0]!.id
  const [owner, stranger] = [await business('Owner'), await business('Stranger')]
  const [placement] = await sql<{ id: string }[]>`
    insert into placements (id, business_id, livemode, status, request_hash, shipments) values (gen_random_uuid(), ${owner}, true, 'pending', 'h', '[]') returning id`
  const order = (id: string, businessId: string, placementId: string) => sql`
    insert into orders (id, placement_id, business_id, position, price, currency, pricing_model, vehicle_type, delivery_mode, distance_km, shipment, history, updated_at)
    values (${id}, ${placementId}, ${businessId}, 0, 100, 'NGN', 'rate_card', 'bike', 'MOTORBIKE', 1, '{}', '[]', now())`
  await t.rejects(order('ORD-0000000001', stranger, placement!.id), { code: '23503' }, 'another business\'s order under this placement is refused')
  await t.rejects(order('ORD-0000000002', owner, '00000000-0000-4000-8000-000000000000'), { code: '23503' }, 'an order of an unknown placement is refused')
  await order('ORD-0000000003', owner, placement!.id)
  t.equal((await sql`select 1 from orders where id = 'ORD-0000000003'`).length, 1, 'the placement\'s own business places it')
})
