import postgres from 'postgres'
import t from 'tap'
import { ensureDatabase, migrate } from '../../shared/db/migrate.js'
import { TEST_DATABASE_URL, useTestDb } from '../helpers/db.js'
import path from 'node:path'
import { projectRoot, waitForValue } from '../helpers/processes.js'

t.test('ensureDatabase: processes creating a missing database at once all succeed', async (t) => {
  // As when the suite's first two files start together on a fresh machine: Postgres refuses
  // the losing creates with 23505 while the winner's is still running, 42P04 after.
  const url = new URL(TEST_DATABASE_URL)
  const name = `courier_ensure_${process.pid}`
  const admin = postgres({ host: url.hostname, port: Number(url.port || 5432), user: decodeURIComponent(url.username), database: 'postgres', max: 1, onnotice: () => {} })
  t.teardown(async () => {
    await admin`drop database if exists ${admin(name)}`
    await admin.end()
  })
  url.pathname = `/${name}`
  for (let round = 0; round < 3; round++) {
    await admin`drop database if exists ${admin(name)}`
    const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => ensureDatabase(url.toString())))
    t.same(outcomes.map((outcome) => outcome.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'], `round ${round + 1}: no create is refused`)
    t.equal((await admin`select 1 from pg_database where datname = ${name}`).length, 1, `round ${round + 1}: the database exists`)
  }
})

t.test('migrations create the schema with the wallet guard', async (t) => {
  const { sql } = await useTestDb(t)
  const tables = await sql<{ tableName: string }[]>`
    select table_name from information_schema.tables where table_schema = current_schema() order by table_name`
  t.ok(tables.map((row) => row.tableName).includes('wallets'))
  const [business] = await sql`insert into businesses (id, name, phone, address, state, currency) values (gen_random_uuid(), 'A', '1', 'x', 'Lagos', 'NGN') returning id`
  await sql`insert into wallets (business_id, balance, currency) values (${business.id}, 0, 'NGN')`
  await t.rejects(sql`update wallets set balance = balance - 1 where business_id = ${business.id}`, { code: '23514' })
})

t.test('a schema already current is left as it is, without waiting for the migration lock', async (t) => {
  const { sql, config } = await useTestDb(t)
  // Another start holds the lock (as a migration job would while it runs): a current schema need not wait for it.
  const reserved = await sql.reserve()
  t.teardown(() => reserved.release())
  await reserved`select pg_advisory_lock(hashtext(${'courier-migrate:' + config.DATABASE_SCHEMA}))`
  let finished = false
  const migrating = migrate(config).then(() => (finished = true))
  const { held } = await waitForValue(async () => finished, (done) => done, 10_000)
  t.ok(held, 'migrate() returned while the lock was held')
  await reserved`select pg_advisory_unlock(hashtext(${'courier-migrate:' + config.DATABASE_SCHEMA}))`
  await migrating
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from migrations`
  t.equal(count, (await sql<{ latest: number }[]>`select max(migration_id)::int as latest from migrations`)[0]!.latest, 'each migration recorded once')
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

t.test('00035: an erasure named by the old plain hash of the number loses the name, keeping the rest of its row', async (t) => {
  const { sql } = await useTestDb(t)
  const [old] = await sql<{ id: string }[]>`insert into audit_log (actor, action, subject, after) values ('cli:ops', 'person.erase', 'phone 5ecdda7788b96f49', '{"orders":["ORD-XXHE5E7HAY"]}') returning id`
  const [other] = await sql<{ id: string }[]>`insert into audit_log (actor, action, subject) values ('cli:ops', 'courier.disable', 'courier 5ecdda7788b96f49') returning id`
  await sql.file(path.join(projectRoot, 'shared/db/migrations/00035_erasure_audit_unkeyed.sql'))
  const rows = await sql`select id, actor, subject, after from audit_log where id in (${old!.id}, ${other!.id}) order by id`
  t.same(rows.map((row) => row.subject), ['phone (unkeyed name removed)', 'courier 5ecdda7788b96f49'], 'only the erasure\'s name goes')
  t.same(rows[0]!.after, { orders: ['ORD-XXHE5E7HAY'] }, 'which orders it erased stays')
})
