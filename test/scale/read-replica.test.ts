import { randomBytes } from 'node:crypto'
import Fastify from 'fastify'
import t from 'tap'
import gatewayApp from '../../services/gateway/app.js'
import { gatewayServerOptions } from '../../services/gateway/server-options.js'
import { commonEnv, gatewayEnv, loadConfig } from '../../shared/config.js'
import { migrate } from '../../shared/db/migrate.js'
import { createReadSql, createSql, endReadSql, type Sql } from '../../shared/db/sql.js'
import { seedAccount } from '../helpers/accounts.js'
import { seedOrder } from '../helpers/console.js'
import { assertWalletsMatchLedger, TEST_SECRETS } from '../helpers/db.js'
import { startOwnPostgres, startStreamingReplica } from '../helpers/postgres.js'
import { waitForValue } from '../helpers/processes.js'
import { bearer } from '../helpers/stack.js'

// DESIGN 16, "Postgres read replica": with DATABASE_READ_URL set, list and backfill reads go to
// a streaming replica; single-resource reads and every write stay on the primary. A list may lag
// a write by the replica's replay lag (docs/scaling.md); the test makes that lag as long as it
// likes by pausing the replica's replay, and shows what a client sees meanwhile and after.
//
// The primary is a cluster of the test's own (initdb, trust, replication allowed from
// 127.0.0.1), not the machine's: the shared server's pg_hba has no replication line, and a test
// changes no machine's configuration. The replica is `pg_basebackup -R -X stream` of it.

const REPLAY_MS = 30_000

t.test('a streaming replica serves the lists and the backfill, never a write or a single read', async (t) => {
  const primary = await startOwnPostgres(t)
  const suffix = randomBytes(5).toString('hex')
  const env = {
    DATABASE_URL: primary.url('courier_test'),
    DATABASE_SCHEMA: `t_${suffix}`,
    QUEUE_PREFIX: `{courier-test-${suffix}}`,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    ...TEST_SECRETS,
  }
  const common = loadConfig(commonEnv, env)
  await migrate(common)
  const sql = createSql(common, { max: 2 })
  t.teardown(() => sql.end())
  const account = await seedAccount(sql, { card: null, balance: 10_000 })
  const orderId = await seedOrder(sql, account.businessId)

  // Made after the schema and the seed: they arrive with the copy, and everything later by replay.
  const replica = await startStreamingReplica(t, primary)
  const standby: Sql = createSql({ ...common, DATABASE_URL: replica.url('courier_test') }, { max: 1 })
  t.teardown(() => standby.end())

  const config = loadConfig(gatewayEnv, { ...env, DATABASE_READ_URL: replica.url('courier_test'), RATE_LIMIT_MAX: '0', PRICING_URL: 'http://127.0.0.1:9' })

  await t.test('the read pool is the replica when DATABASE_READ_URL is set, and the primary pool itself when not', async (t) => {
    const reads = createReadSql(config, sql, { max: 1 })
    t.teardown(() => endReadSql(reads, sql))
    t.not(reads, sql, 'a pool of its own')
    const [{ recovering }] = await reads<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`
    t.equal(recovering, true, 'the read pool answers pg_is_in_recovery() true: it is the standby')
    const [{ recovering: primaryRecovering }] = await sql<{ recovering: boolean }[]>`select pg_is_in_recovery() as recovering`
    t.equal(primaryRecovering, false, 'the primary pool is the primary')
    const { DATABASE_READ_URL: _unset, ...withoutReplica } = config
    t.equal(createReadSql(withoutReplica, sql), sql, 'unset: every read goes to the primary pool')
  })

  const gateway = Fastify({ ...gatewayServerOptions(config), logger: false })
  await gateway.register(gatewayApp, { config })
  await gateway.ready()
  t.teardown(() => gateway.close())

  const get = async (url: string) => {
    const response = await gateway.inject({ method: 'GET', url, headers: bearer(account.apiKey) })
    if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}: ${response.body}`)
    return response.json() as { data: Record<string, any>[] } & Record<string, any>
  }
  const listed = async () => (await get('/v2/business/orders')).data.find((order) => order.order_id === orderId)?.status ?? null
  const eventTypes = async () => (await get('/v2/business/events?after=0')).data.map((event) => event.type as string)
  const entryTypes = async () => (await get('/v2/business/wallet/transactions')).data.map((entry) => entry.type as string)
  const gatewayConnections = async (db: Sql) =>
    Number((await db<{ count: number }[]>`select count(*)::int as count from pg_stat_activity where application_name like 'courier %' and pid <> pg_backend_pid()`)[0]!.count)

  const caughtUp = await waitForValue(listed, (status) => status === 'created', REPLAY_MS, 100)
  t.equal(caughtUp.value, 'created', 'the seeded order is listed once the replica has replayed it')
  t.ok(await gatewayConnections(standby) > 0, 'the gateway holds connections on the replica after a list')

  // From here on the replica replays nothing: its lag grows without bound until it resumes.
  await standby`select pg_wal_replay_pause()`
  const paused = await waitForValue(async () => (await standby<{ state: string }[]>`select pg_get_wal_replay_pause_state() as state`)[0]!.state, (state) => state === 'paused', REPLAY_MS, 50)
  t.equal(paused.value, 'paused', 'the replica stopped replaying')

  const cancel = await gateway.inject({ method: 'POST', url: `/v2/business/orders/${orderId}/cancel`, headers: bearer(account.apiKey) })
  t.equal(cancel.statusCode, 200, 'a write goes to the primary: the cancel succeeds while the replica is frozen (and read-only)')
  t.equal(cancel.json().status, 'cancelled')

  await t.test('while the replica lags, a single-resource read is current and the lists are not yet', async (t) => {
    const one = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${orderId}`, headers: bearer(account.apiKey) })
    t.equal(one.json().status, 'cancelled', 'GET /orders/{id} reads the primary: never stale')
    const wallet = await gateway.inject({ method: 'GET', url: '/v2/business/wallet', headers: bearer(account.apiKey) })
    t.equal(wallet.json().balance, 10_000 + 1_500, 'the balance reads the primary: the refund is there')
    t.equal(await listed(), 'created', 'the orders list still shows the order as the replica last replayed it')
    t.same(await eventTypes(), [], 'the events backfill does not have the cancel yet')
    t.same(await entryTypes(), ['credit'], 'the statement does not have the refund yet')
    const [{ count }] = await standby<{ count: number }[]>`select count(*)::int as count from events`
    t.equal(count, 0, 'the replica has no event: the write was not made there')
    const [{ written }] = await sql<{ written: number }[]>`select count(*)::int as written from events`
    t.equal(written, 1, 'the primary has it')
  })

  await standby`select pg_wal_replay_resume()`
  await t.test('once replayed, the lists show the write', async (t) => {
    const status = await waitForValue(listed, (value) => value === 'cancelled', REPLAY_MS, 50)
    t.equal(status.value, 'cancelled', 'the orders list shows the cancel')
    t.same(await eventTypes(), ['order.cancelled'], 'the backfill has the event')
    t.same((await entryTypes()).sort(), ['credit', 'refund'], 'the statement has the refund')
  })

  // The invariant useTestDb's teardown checks on every other file's schema, here on the primary
  // of the test's own: the wallet, refund and all, equals its ledger. Checked in the body, not a
  // teardown, so a breach fails the test without skipping the teardown that stops that Postgres.
  await assertWalletsMatchLedger(sql)
})
