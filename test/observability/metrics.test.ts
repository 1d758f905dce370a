import Fastify from 'fastify'
import t from 'tap'
import { poolSessions } from '../../shared/db/pool.js'
import { createSql } from '../../shared/db/sql.js'
import { relayEvents, webhookLagSeconds } from '../../shared/db/webhooks.js'
import healthRoutes from '../../shared/http/health.js'
import { createRedis } from '../../shared/redis.js'
import { startMetrics } from '../../shared/telemetry/metrics-endpoint.js'
import { seedAccount } from '../helpers/accounts.js'
import { useTestDb } from '../helpers/db.js'
import { startOwnRedis, waitForValue } from '../helpers/processes.js'
import { shipment } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'

/*
 * The metrics DESIGN 15's alerts and dashboards need and the services did not have: readiness and
 * dependencies up, a pool's busy sessions, webhook lag. Each is checked for what it claims, on
 * the real Postgres and Redis.
 */

const metrics = await startMetrics(0, '127.0.0.1')
const metricsPort = metrics.port
t.teardown(() => metrics.close())
const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
/** A sample's value from the exposition, or null when it is not there. */
const sample = (text: string, name: string, labels = '') => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{${labels}`))
  return line === undefined ? null : Number(line.slice(line.lastIndexOf(' ') + 1))
}

t.test('courier_ready and courier_dependency_up follow /readyz: a service that needs Redis is unready without it', async (t) => {
  const { config } = await useTestDb(t)
  const redisServer = await startOwnRedis(t)
  const sql = createSql(config, { max: 3 })
  const redis = createRedis({ ...config, REDIS_URL: redisServer.url }, { maxRetriesPerRequest: 0, enableOfflineQueue: false })
  redis.on('error', () => {})
  const app = Fastify({ logger: false })
  await app.register(healthRoutes, { sql, redis, needsRedis: true })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    redis.disconnect()
    await sql.end({ timeout: 5 })
  })

  const ready = await waitForValue(scrape, (text) => sample(text, 'courier_ready') === 1, 10_000, 200)
  const up = ready.value
  t.equal(sample(up, 'courier_ready'), 1, 'ready once Redis is connected')
  t.equal(sample(up, 'courier_dependency_up', 'dependency="postgres"'), 1, 'postgres up')
  t.equal(sample(up, 'courier_dependency_up', 'dependency="redis"'), 1, 'redis up')
  t.equal(sample(up, 'courier_db_pool_max', 'pool="primary"'), 3, 'the pool\'s size')
  t.ok((sample(up, 'courier_db_pool_connections', 'pool="primary",state="open"') ?? 0) >= 1, 'its own count holds an open session')
  t.ok((sample(up, 'courier_db_pool_connections', 'pool="primary",state="busy"') ?? 3) < 3, 'which is not counted busy: a pool of 3 is not full')
  t.equal(sample(up, 'courier_db_pool_max', 'pool="replica"'), null, 'no replica pool without DATABASE_READ_URL')

  await redisServer.stop()
  const down = await waitForValue(scrape, (text) => sample(text, 'courier_dependency_up', 'dependency="redis"') === 0, 10_000, 200)
  t.equal(sample(down.value, 'courier_dependency_up', 'dependency="redis"'), 0, 'redis down')
  t.equal(sample(down.value, 'courier_ready'), 0, 'not ready: the worker cannot work without its queue')
  t.equal(sample(down.value, 'courier_dependency_up', 'dependency="postgres"'), 1, 'postgres still up')
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503, '/readyz says the same')
})

t.test('poolSessions counts the sessions of its own pool only; a pool with every session held counts full', async (t) => {
  const { config } = await useTestDb(t)
  const sql = createSql(config, { max: 3 })
  const other = createSql(config, { max: 2 })
  t.teardown(async () => {
    await sql.end({ timeout: 5 })
    await other.end({ timeout: 5 })
  })
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  // Two transactions of this pool, two of another, all open until released. Each says when it is
  // inside its transaction: before that, a new session may still be running the driver's own
  // setup query (busy) and then sit idle until its `begin`, so a count taken earlier can match by
  // chance and a later one see a session fewer.
  const entered: Promise<void>[] = []
  const holders = [sql, sql, other, other].map((pool) => {
    let inside!: () => void
    entered.push(new Promise<void>((resolve) => (inside = resolve)))
    return pool.begin(async (tx) => { await tx`select 1`; inside(); await held })
  })
  t.teardown(() => { release(); return Promise.all(holders) })
  await Promise.all(entered)
  t.same(await poolSessions(sql), { busy: 2, open: 3 }, 'two idle-in-transaction sessions, not the counting one; the other pool is not counted')

  const app = Fastify({ logger: false })
  const redis = createRedis(config, { maxRetriesPerRequest: 0 })
  // `other` as the primary, `sql` as the replica's pool (DATABASE_READ_URL): each reported on its own.
  await app.register(healthRoutes, { sql: other, reads: sql, redis, needsRedis: false })
  await app.ready()
  t.teardown(async () => {
    await app.close()
    redis.disconnect()
  })
  const text = await scrape()
  t.equal(sample(text, 'courier_db_pool_connections', 'pool="primary",state="busy"'), 2, 'a pool that cannot answer within a second reports every session busy')
  t.equal(sample(text, 'courier_db_pool_max', 'pool="primary"'), 2)
  t.equal(sample(text, 'courier_db_pool_connections', 'pool="replica",state="busy"'), 2, 'the replica\'s pool: its two held sessions, not the counting one (one was free for it)')
  t.equal(sample(text, 'courier_db_pool_max', 'pool="replica"'), 3)
})

t.test('webhook lag: the age of the oldest unrelayed event or due delivery; a retry not yet due does not count', async (t) => {
  const { gateway, db } = await startStack(t)
  const account = await seedAccount(db.sql, { balance: 100000, scopes: ['orders:write', 'webhooks:write'] })
  t.equal(await webhookLagSeconds(db.sql), 0, 'nothing to deliver')
  const endpoint = await gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: bearer(account.apiKey), payload: { url: 'http://127.0.0.1:9/hooks' } })
  t.equal(endpoint.statusCode, 201, endpoint.body)
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment()] })).statusCode, 201)

  // The lag is an age on Postgres's clock, so it is checked against the same age read by the
  // statements just before and just after it, not against a window of wall-clock time.
  const ageOf = async (column: 'events.created_at' | 'webhook_deliveries.next_attempt_at') => {
    const [table, name] = column.split('.') as [string, string]
    const [row] = await db.sql<{ age: number }[]>`select extract(epoch from now() - min(${db.sql(name)}))::float8 as age from ${db.sql(table)}`
    return row!.age
  }
  const lagBetween = async (column: Parameters<typeof ageOf>[0]) => {
    const before = await ageOf(column)
    const lag = await webhookLagSeconds(db.sql)
    const after = await ageOf(column)
    return { before, lag, after, within: before <= lag && lag <= after }
  }

  // No sender runs: the event waits in the outbox, and the lag is its age.
  await db.sql`update events set created_at = now() - interval '75 seconds'`
  const unrelayed = await lagBetween('events.created_at')
  t.ok(unrelayed.before >= 75, `the event is 75 s old: ${unrelayed.before}`)
  t.ok(unrelayed.within, `an unrelayed event's lag is its age: ${JSON.stringify(unrelayed)}`)

  const { deliveries } = await relayEvents(db.sql, 10)
  t.equal(deliveries.length, 1, 'relayed into one delivery')
  const due = await lagBetween('webhook_deliveries.next_attempt_at')
  t.ok(due.before > 0 && due.within, `a delivery due since its relay: its lag is its age: ${JSON.stringify(due)}`)
  await db.sql`update webhook_deliveries set next_attempt_at = now() - interval '90 seconds'`
  const late = await lagBetween('webhook_deliveries.next_attempt_at')
  t.ok(late.before >= 90, `the delivery has been due 90 s: ${late.before}`)
  t.ok(late.within, `a delivery due 90 s ago: its lag is its age: ${JSON.stringify(late)}`)
  await db.sql`update webhook_deliveries set status = 'retrying', next_attempt_at = now() + interval '5 minutes'`
  t.equal(await webhookLagSeconds(db.sql), 0, 'a retry waiting for its time is not lag')
  await db.sql`update webhook_deliveries set status = 'succeeded', next_attempt_at = now() - interval '1 hour'`
  t.equal(await webhookLagSeconds(db.sql), 0, 'a delivery at rest is not lag')
})
