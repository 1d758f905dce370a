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
