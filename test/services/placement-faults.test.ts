import Fastify from 'fastify'
import t from 'tap'
import { loadConfig, workerEnv } from '../../shared/config.js'
import type { Sql } from '../../shared/db/sql.js'
import { startPlacementWorker } from '../../services/placement-worker/worker.js'
import { seedAccount } from '../helpers/accounts.js'
import { holdLock, lockWaiters, walletsAgainstLedger, type HeldLock } from '../helpers/db.js'
import { startBuiltService, startOwnRedis, waitFor } from '../helpers/processes.js'
import { shipment as lagosShipment, quoteRequest } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'
import { checkResponsesAgainstDocument } from '../helpers/openapi-responses.js'

// No pickup of its own: it leaves from the seeded business's pinned point in Lekki.
const shipment = lagosShipment({ pickup_latitude: undefined, pickup_longitude: undefined })

t.test('a placement that outlives the wait: 503 with its id, 409 while running, then the real answer', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false, env: { PLACEMENT_TIMEOUT_MS: '800' } })
  const account = await seedAccount(db.sql, { balance: 100000 })
  const headers = { ...bearer(account.apiKey), 'idempotency-key': 'slow-1' }

  const first = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers, payload: [shipment] })
  t.equal(first.statusCode, 503)
  const placementId = first.json().placement_id
  t.match(placementId, /^[0-9a-f-]{36}$/)
  t.equal(first.json().path, '/v2/business/order')

  const again = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers, payload: [shipment] })
  t.equal(again.statusCode, 409)
  t.equal(again.json().message, 'A request with this Idempotency-Key is still in progress')

  const pending = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placementId}`, headers: bearer(account.apiKey) })
  t.equal(pending.statusCode, 202)
  t.same(pending.json(), { status: 'pending', placement_id: placementId })

  // A worker comes up and drains the queue.
  const worker = Fastify({ logger: false })
  await worker.register(startPlacementWorker, { config: loadConfig(workerEnv, db.env) })
  await worker.ready()
  t.teardown(() => worker.close())

  t.ok(await waitFor(async () => (await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placementId}`, headers: bearer(account.apiKey) })).statusCode === 201, 10000))
  const replay = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers, payload: [shipment] })
  t.equal(replay.statusCode, 201)
  t.equal(replay.json().placement_id, placementId)
  const debits = await db.sql`select amount from ledger_entries where business_id = ${account.businessId} and kind = 'debit'`
  t.equal(debits.length, 1)
  t.equal(debits[0].amount, replay.json().charged_total * 100)
})

t.test('a worker killed mid-transaction: the job runs again and settles exactly once', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const { sql } = db
  const account = await seedAccount(sql, { balance: 100000 })
  const workerEnvVars = { ...db.env, WORKER_PORT: '0', WORKER_OPS_PORT: '0', WORKER_LOCK_MS: '1500', WORKER_STALLED_INTERVAL_MS: '500' }

  // Hold the wallet row so the first worker stops inside its transaction, after the placement lock.
  const walletLock = await holdWalletLock(sql, account.businessId)

  const first = startBuiltService(t, 'services/placement-worker/main.js', workerEnvVars)
  const response = gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.ok(await walletLockAwaited(sql, walletLock), 'the first worker waits on the wallet lock inside its transaction')

  first.kill('SIGKILL')
  await new Promise((resolve) => first.once('exit', resolve))
  await walletLock.release()

  startBuiltService(t, 'services/placement-worker/main.js', workerEnvVars)
  const answer = await response
  t.equal(answer.statusCode, 201, answer.body)
  const placementId = answer.json().placement_id
  const orders = await sql`select id from orders where placement_id = ${placementId}`
  t.equal(orders.length, 1, 'one set of orders')
  const debits = await sql`select amount from ledger_entries where placement_id = ${placementId} and kind = 'debit'`
  t.equal(debits.length, 1, 'one debit')
  const [wallet] = await sql`select balance from wallets where business_id = ${account.businessId}`
  t.equal(wallet.balance, 10000000 - debits[0].amount)
})

t.test('SIGTERM: the worker finishes the job in hand, then exits', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const { sql } = db
  const account = await seedAccount(sql, { balance: 100000 })
  const walletLock = await holdWalletLock(sql, account.businessId)

  const worker = startBuiltService(t, 'services/placement-worker/main.js', { ...db.env, LOG_LEVEL: 'info', WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
  let output = ''
  worker.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => worker.once('exit', (code) => resolve(code)))
  const response = gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.ok(await walletLockAwaited(sql, walletLock), 'the job is inside its transaction')

  worker.kill('SIGTERM')
  t.ok(await waitFor(() => output.includes('worker stopping'), 10000), 'the worker took the signal')
  t.equal(worker.exitCode, null, 'still running while its job is unfinished')
  await walletLock.release()
  const answer = await response
  t.equal(answer.statusCode, 201, 'the job in hand completed')
  t.equal(await exited, 0, 'then the worker exited cleanly')
})

t.test('Redis down: placements answer 503 at once and leave nothing behind; quotes go on; recovery after restart', async (t) => {
  const redis = await startOwnRedis(t)
  const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url } })
  // A worker process of its own: BullMQ 6.7's Worker.close() can hang after its Redis restarted,
  // and a process is simply killed (in production, runService's 30 s limit ends it the same way).
  startBuiltService(t, 'services/placement-worker/main.js', { ...db.env, REDIS_URL: redis.url, WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
  const account = await seedAccount(db.sql, { balance: 100000 })
  const place = (headers: Record<string, string> = {}) => gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), ...headers }, payload: [shipment] })

  t.equal((await place()).statusCode, 201)
  await redis.stop()

  // Answered at once, not after the placement timeout: that answer says "still being processed"
  // and leaves the placement pending, where this one is the stored not-processed outcome.
  const refused = await place({ 'idempotency-key': 'during-outage' })
  t.equal(refused.statusCode, 503)
  t.equal(refused.json().message, 'Placement was not processed; nothing was charged')
  const refusedId = refused.json().placement_id
  t.match(refusedId, /^[0-9a-f-]{36}$/, 'the 503 names its placement')
  const [row] = await db.sql`select status, outcome, idempotency_key from placements where id = ${refusedId}`
  t.same(row, { status: 'failed', outcome: { kind: 'not_processed' }, idempotencyKey: null }, 'settled as not processed, its key freed')
  const [{ count: pending }] = await db.sql`select count(*)::int from placements where status = 'pending'`
  t.equal(pending, 0, 'no pending placement is left behind')
  const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${refusedId}`, headers: bearer(account.apiKey) })
  t.equal(read.statusCode, 503)
  t.equal(read.json().message, 'Placement was not processed; nothing was charged')

  const quote = await gateway.inject({
    method: 'POST', url: '/v2/business/order/cost', headers: bearer(account.apiKey),
    payload: quoteRequest(),
  })
  t.equal(quote.statusCode, 200, 'quotes do not need Redis')

  await startOwnRedis(t, redis.port)
  t.ok(await waitFor(async () => (await place({ 'idempotency-key': 'during-outage' })).statusCode === 201, 15000, 300), 'a retry with the same key places once Redis is back')
  for (const wallet of await walletsAgainstLedger(db.sql)) t.equal(wallet.balance, wallet.ledger)
})

t.test('Postgres out of reach: 503 in the error body, never a 500', async (t) => {
  const { db } = await startStack(t, { worker: false })
  const account = await seedAccount(db.sql, { balance: 100 })
  const { gatewayEnv } = await import('../../shared/config.js')
  const { default: gatewayApp } = await import('../../services/gateway/app.js')
  const { gatewayServerOptions } = await import('../../services/gateway/server-options.js')
  const config = loadConfig(gatewayEnv, { ...db.env, DATABASE_URL: 'postgres://root@127.0.0.1:1/courier_test', RATE_LIMIT_MAX: '0' })
  const gateway = Fastify({ ...gatewayServerOptions(config), logger: false })
  checkResponsesAgainstDocument(gateway)
  await gateway.register(gatewayApp, { config })
  t.teardown(() => gateway.close())
  const response = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.equal(response.statusCode, 503)
  t.equal(response.json().message, 'Service temporarily unavailable, retry shortly')
  t.equal(response.json().path, '/v2/business/order')
})


t.test('Redis Cluster: the hash-tagged prefix keeps placements, quotes and the rate limit in one slot', async (t) => {
  const redis = await startOwnRedis(t, undefined, { cluster: true })
  const env = { REDIS_URL: redis.url, REDIS_CLUSTER_NODES: `127.0.0.1:${redis.port}` }
  const { gateway, db } = await startStack(t, { worker: false, env: { ...env, RATE_LIMIT_MAX: '100' } })
  startBuiltService(t, 'services/placement-worker/main.js', { ...db.env, ...env, WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
  const account = await seedAccount(db.sql, { balance: 100000 })
  const placed = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.equal(placed.statusCode, 201, placed.statusCode === 201 ? 'placed through the cluster' : placed.body)
  const quoted = await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(account.apiKey), payload: quoteRequest() })
  t.equal(quoted.statusCode, 200)
  t.equal(quoted.headers['ratelimit-limit'], '100', 'the limiter counted in the cluster')
})

/** Holds a wallet's row lock in a transaction of the test's own until `release`. */
function holdWalletLock(sql: Sql, businessId: string): Promise<HeldLock> {
  return holdLock(sql, (tx) => tx`select balance from wallets where business_id = ${businessId} for update`)
}

/** Whether, within 10 s, a transaction of this test's services comes to wait on the lock `held` holds. */
async function walletLockAwaited(sql: Sql, held: HeldLock): Promise<boolean> {
  return waitFor(async () => (await lockWaiters(sql, held.pid)).length > 0, 10000)
}
