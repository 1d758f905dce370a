import t from 'tap'
import { findEventById, listEvents } from '../../../shared/db/events.js'
import { listPartitions, PARTITIONED, type PartitionedTable } from '../../../shared/db/partitions.js'
import type { Sql } from '../../../shared/db/sql.js'
import { findTrail } from '../../../shared/db/trails.js'
import { listAttempts } from '../../../shared/db/webhooks.js'
import { keepPartitions, MONTHS_AHEAD, monthPartition, partitionMonth, pruneSettledDeliveries } from '../../../shared/orders/history.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { schemaAt } from '../../helpers/db.js'

// DESIGN 16, "Tables that grow forever stop doing so": migration 00022 turns events, webhook
// attempts and order trails into tables partitioned by month without losing a row, the worker's
// upkeep makes months ahead, and retention drops whole months past EVENT_RETENTION_D (events,
// attempts) or PERSONAL_DATA_RETENTION_D (trails), and nothing younger.

const DAY = 86_400_000
const BEFORE_PARTITIONING = 21
const TABLES = Object.keys(PARTITIONED) as PartitionedTable[]
const T0 = Date.now()
const ago = (days: number) => new Date(T0 - days * DAY)

const rowsOf = async (sql: Sql, table: string, order: string) => (await sql.unsafe<{ row: string }[]>(`select t::text as row from ${table} t order by ${order}`)).map((r) => r.row)

t.test('migration 00022 moves every row of the old tables into month partitions', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, BEFORE_PARTITIONING)
  const account = await seedAccount(sql, { card: null })
  const orderId = await seedOrder(sql, account.businessId)
  const times = [ago(700), ago(95), ago(40), ago(1), ago(0)]
  for (const [n, at] of times.entries()) {
    await sql`
      insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at, traceparent)
      values (${`evt_old${n}`}, ${account.businessId}, true, ${n + 1}, 'order.created', ${orderId}, 1, ${JSON.stringify({ order: { order_id: orderId, n } })}::json, ${at}, null)`
    await sql`insert into order_trail_points (order_id, at, latitude, longitude) values (${orderId}, ${at}, ${6.4 + n / 100}, 3.4)`
  }
  await sql`insert into event_sequences (business_id, livemode, last_sequence) values (${account.businessId}, true, ${times.length})`
  await sql`insert into webhook_endpoints (id, business_id, livemode, url, secret) values ('we_hist', ${account.businessId}, true, 'https://example.com/hooks', 'sealed')`
  const [delivery] = await sql<{ id: number }[]>`insert into webhook_deliveries (event_id, endpoint_id, status, created_at) values ('evt_old0', 'we_hist', 'succeeded', ${times[0]}) returning id`
  for (const [n, at] of times.entries()) {
    await sql`
      insert into webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, status, response_status, duration_ms, at)
      values (${delivery!.id}, 'we_hist', 'evt_old0', 'order.created', ${n + 1}, 'retrying', 500, 12, ${at})`
  }
  const before = {
    events: await rowsOf(sql, 'events', 'id'),
    webhook_attempts: await rowsOf(sql, 'webhook_attempts', 'id'),
    order_trail_points: await rowsOf(sql, 'order_trail_points', 'at'),
  }

  await migrateRest()

  for (const table of TABLES) {
    t.same(await rowsOf(sql, table, table === 'order_trail_points' ? 'at' : 'id'), before[table], `${table}: every row, column for column`)
    const [{ kind }] = await sql<{ kind: string }[]>`select relkind::text as kind from pg_class where oid = to_regclass(${table})`
    t.equal(kind, 'p', `${table} is partitioned`)
    const [{ strays }] = await sql.unsafe<{ strays: number }[]>(`select count(*)::int as strays from ${table}_default`)
    t.equal(strays, 0, `${table}: no row left in the default partition`)
    const names = await listPartitions(sql, table)
    for (let offset = 0; offset <= MONTHS_AHEAD; offset++) t.ok(names.includes(monthPartition(table, new Date(), offset).name), `${table}: month +${offset} made`)
    t.ok(names.includes(monthPartition(table, times[0]!).name), `${table}: the oldest row's month made`)
  }
  const [placed] = await sql<{ partition: string }[]>`select tableoid::regclass::text as partition from events where id = 'evt_old1'`
  t.equal(placed!.partition, monthPartition('events', times[1]!).name, 'a row lives in its month')

  // What the code reads and writes still works on the new tables.
  t.equal((await findEventById(sql, 'evt_old2'))?.createdAt.getTime(), times[2]!.getTime(), 'an event is found by its id alone')
  const listed = await listEvents(sql, { businessId: account.businessId, livemode: true }, { after: 1, types: null, limit: 3 })
  t.same(listed.map((event) => event.sequence), [2, 3, 4], 'the backfill reads in sequence order across months')
  t.equal((await findTrail(sql, orderId)).length, times.length, 'the trail reads across months')
  const [added] = await sql<{ id: number }[]>`
    insert into webhook_attempts (delivery_id, endpoint_id, event_id, event_type, attempt, status, duration_ms)
    values (${delivery!.id}, 'we_hist', 'evt_old0', 'order.created', 6, 'succeeded', 9) returning id`
  t.equal(added!.id, times.length + 1, 'attempt ids go on from the last one moved')
  t.same((await listAttempts(sql, 'we_hist', { beforeId: null, limit: 2 })).map((attempt) => attempt.id), [times.length + 1, times.length], 'the delivery log reads newest first')
  await sql`insert into order_trail_points (order_id, at, latitude, longitude) values (${orderId}, ${times[4]!}, 0, 0) on conflict do nothing`
  t.equal((await findTrail(sql, orderId)).length, times.length, 'a trail point already there is kept as it was (on conflict)')
  await t.rejects(sql`insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at) values ('evt_old1', ${account.businessId}, true, 99, 'order.created', ${orderId}, 1, '{}', ${times[1]!})`, { code: '23505' }, 'an event id is still unique within its month')
})

t.test('partition upkeep makes months ahead, rescues rows the default partition caught, and is idempotent', async (t) => {
  const { sql } = await schemaAt(t, null)
  const account = await seedAccount(sql, { card: null })
  const orderId = await seedOrder(sql, account.businessId)
  const later = new Date(Date.UTC(new Date(T0).getUTCFullYear(), new Date(T0).getUTCMonth() + 6, 15))
  const stray = monthPartition('events', later, 1)
  // A month nobody made yet: the row lands in the default partition.
  await sql`
    insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at)
    values ('evt_ahead', ${account.businessId}, true, 1, 'order.created', ${orderId}, 1, '{}', ${new Date(stray.from.getTime() + DAY)})`
  t.equal((await sql`select tableoid::regclass::text as p from events where id = 'evt_ahead'`)[0]!.p, 'events_default')

  const retention = { eventRetentionD: 30, trailRetentionD: 90 }
  const first = await keepPartitions(sql, retention, later)
  t.ok(first.ran)
  for (const table of TABLES) {
    for (let offset = 0; offset <= MONTHS_AHEAD; offset++) t.ok(first.created.includes(monthPartition(table, later, offset).name), `${table}: month +${offset} of the later date made`)
  }
  t.equal((await sql`select tableoid::regclass::text as p from events where id = 'evt_ahead'`)[0]!.p, stray.name, 'the caught row moved into its month when the month was made')
  const again = await keepPartitions(sql, retention, later)
  t.same(again.created, [], 'a second run makes nothing')
  t.same(again.dropped, [], 'and drops nothing')
})

t.test('retention drops whole months past their table\'s retention, and nothing younger', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, BEFORE_PARTITIONING)
  const account = await seedAccount(sql, { card: null })
  const orderId = await seedOrder(sql, account.businessId)
  const eventDays = [700, 95, 40, 31, 29, 1, 0]
  const trailDays = [130, 95, 89, 40, 0]
  for (const [n, days] of eventDays.entries()) {
    await sql`
      insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at)
      values (${`evt_${days}`}, ${account.businessId}, true, ${n + 1}, 'order.created', ${orderId}, 1, '{}', ${ago(days)})`
  }
  for (const days of trailDays) await sql`insert into order_trail_points (order_id, at, latitude, longitude) values (${orderId}, ${ago(days)}, 6.5, 3.4)`
  await sql`insert into webhook_endpoints (id, business_id, livemode, url, secret) values ('we_ret', ${account.businessId}, true, 'https://example.com/hooks', 'sealed')`
  const delivery = async (eventId: string, status: string, days: number) =>
    (await sql<{ id: number }[]>`insert into webhook_deliveries (event_id, endpoint_id, status, created_at) values (${eventId}, 'we_ret', ${status}, ${ago(days)}) returning id`)[0]!.id
  const oldDone = await delivery('evt_95', 'succeeded', 95)
  const oldOpen = await delivery('evt_40', 'retrying', 40)
  const recent = await delivery('evt_1', 'failed', 1)
  await migrateRest()
  // A row older than every month (no partition holds it): the default partition's.
  await sql`
    insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at)
    values ('evt_800', ${account.businessId}, true, 99, 'order.created', ${orderId}, 1, '{}', ${ago(800)})`

  const now = new Date(T0)
  const upkeep = await keepPartitions(sql, { eventRetentionD: 30, trailRetentionD: 90 }, now)
  t.equal(upkeep.strays, 1, 'the stray row past retention left the default partition')
  t.equal(await pruneSettledDeliveries(sql, 30, now), 1, 'one settled delivery is past 30 days')

  const kept = (table: PartitionedTable, days: number, retentionD: number) => monthPartition(table, ago(days)).to.getTime() > T0 - retentionD * DAY
  const eventsLeft = new Set((await sql<{ id: string }[]>`select id from events`).map((row) => row.id))
  for (const days of eventDays) {
    t.equal(eventsLeft.has(`evt_${days}`), kept('events', days, 30), `an event ${days} days old is ${kept('events', days, 30) ? 'kept: its month ends within 30 days' : 'gone with its month'}`)
  }
  t.ok(eventsLeft.has('evt_29') && eventsLeft.has('evt_1') && eventsLeft.has('evt_0'), 'nothing younger than 30 days is dropped')
  t.notOk(eventsLeft.has('evt_700') || eventsLeft.has('evt_95') || eventsLeft.has('evt_800'), 'months past retention are gone')
  const trailLeft = (await findTrail(sql, orderId)).map((point) => Math.round((T0 - point.at.getTime()) / DAY))
  for (const days of trailDays) t.equal(trailLeft.includes(days), kept('order_trail_points', days, 90), `a trail point ${days} days old: kept while its month ends within 90 days`)
  for (const name of upkeep.dropped) {
    const table = TABLES.find((candidate) => partitionMonth(candidate, name) !== null)!
    t.ok(partitionMonth(table, name)!.to.getTime() <= T0 - (table === 'order_trail_points' ? 90 : 30) * DAY, `${name} ended before its table's cutoff`)
  }
  const deliveries = new Set((await sql<{ id: number }[]>`select id from webhook_deliveries`).map((row) => row.id))
  t.notOk(deliveries.has(oldDone), 'a settled delivery past 30 days is deleted')
  t.ok(deliveries.has(oldOpen), 'a delivery not at rest is kept, whatever its age')
  t.ok(deliveries.has(recent), 'a recent one is kept')
})
