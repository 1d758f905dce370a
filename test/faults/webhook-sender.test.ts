import type { ChildProcess } from 'node:child_process'
import t, { type Test } from 'tap'
import type { Sql } from '../../shared/db/sql.js'
import { seedAccount, type SeededAccount } from '../helpers/accounts.js'
import { walletsAgainstLedger } from '../helpers/db.js'
import { PLACE } from '../helpers/gateway.js'
import { startBuiltService, startOwnRedis, waitFor, waitForValue } from '../helpers/processes.js'
import { shipment } from '../helpers/shipments.js'
import { bearer, startStack, type Stack } from '../helpers/stack.js'
import { startReceiver, type Receipt, type Receiver } from '../helpers/webhook-receiver.js'

// DESIGN.md section 9 ("delivery is at least once") and section 13 item 5: killing the sender
// mid-delivery, or Redis losing the queue, loses no event. The sender runs as the built
// service (dist/, as `npm test` builds it) so it can be killed outright; the receiver holds
// every request a while, so the faults land while deliveries are in flight.

const EVENTS = 24
// A generous deadline that a lost event (never delivered) misses by far.
const WAIT_MS = 30_000

/** The sender's environment: small locks, so a dead sender's jobs are taken back within seconds. */
function senderEnv(db: Stack['db'], extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...db.env,
    WEBHOOK_SENDER_PORT: '0',
    WEBHOOK_SENDER_OPS_PORT: '0',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_LOCK_MS: '1500',
    WEBHOOK_STALLED_INTERVAL_MS: '500',
    WEBHOOK_REQUEUE_AFTER_S: '1',
    WEBHOOK_RETRY_SCALE: '0.001',
    WEBHOOK_TIMEOUT_MS: '5000',
    ...extra,
  }
}

/** A business with an endpoint at `path` of the receiver, which holds each delivery `holdMs` before its 204. */
async function slowEndpoint(t: Test, stack: Stack, receiver: Receiver, path: string, holdMs: number): Promise<SeededAccount & { endpointId: string }> {
  const account = await seedAccount(stack.db.sql, { balance: 1_000_000, scopes: ['orders:write', 'webhooks:write'], name: `Receiver ${path}` })
  const response = await stack.gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: bearer(account.apiKey), payload: { url: receiver.url(path) } })
  t.equal(response.statusCode, 201, response.statusCode === 201 ? `endpoint ${path} created` : response.body)
  receiver.route(path, { secrets: [response.json().secret], respond: () => ({ status: 204, holdMs }) })
  return { ...account, endpointId: response.json().id }
}

/** One placement of `count` shipments: `count` order.created events. Returns their event ids. */
async function placeOrders(t: Test, stack: Stack, account: SeededAccount, count: number): Promise<string[]> {
  const placed = await stack.gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: Array.from({ length: count }, () => shipment()) })
  t.equal(placed.statusCode, 201, placed.statusCode === 201 ? `${count} orders placed` : placed.body)
  const rows = await stack.db.sql`select id from events where business_id = ${account.businessId} order by sequence`
  t.equal(rows.length, count, `${count} events written`)
  return rows.map((row) => row.id as string)
}

/** Event ids whose delivery the receiver answered 204 on a connection still open. */
const deliveredIds = (receipts: Receipt[]) => new Set(receipts.filter((r) => r.completed && r.answered === 204).map((r) => r.id))

/** Every event delivered, verified and logged as succeeded, each delivery row at rest. */
async function assertEveryEventArrived(t: Test, sql: Sql, receiver: Receiver, path: string, endpointId: string, eventIds: string[]) {
  const arrived = await waitForValue(async () => deliveredIds(receiver.at(path)), (ids) => eventIds.every((id) => ids.has(id)), WAIT_MS, 50)
  const missing = eventIds.filter((id) => !arrived.value.has(id))
  t.ok(arrived.held, `every one of the ${eventIds.length} events reached the receiver (missing: ${missing.join(', ') || 'none'})`)
  const receipts = receiver.at(path)
  t.ok(receipts.every((r) => r.verified), 'every request verified with the endpoint secret')
  t.ok(receipts.every((r) => r.headersOk), 'and carried the content type and user agent')
  t.ok(receipts.every((r) => eventIds.includes(r.id)), 'nothing but these events was sent')
  const rows = await waitForValue(
    async () => sql`select event_id, status from webhook_deliveries where endpoint_id = ${endpointId}`,
    (rows) => rows.length === eventIds.length && rows.every((row) => row.status === 'succeeded'), WAIT_MS, 100)
  t.ok(rows.held, `every delivery row ended succeeded: ${JSON.stringify(rows.value.filter((row) => row.status !== 'succeeded'))}`)
  t.same(rows.value.map((row) => row.eventId).sort(), [...eventIds].sort(), 'one delivery per event')
  for (const wallet of await walletsAgainstLedger(sql)) t.equal(wallet.balance, wallet.ledger, 'balance = sum of the ledger')
  return receipts
}

function exited(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))
}

t.test('the sender SIGKILLed mid-delivery: a new one delivers every event, at least once', async (t) => {
  const receiver = await startReceiver(t)
  const stack = await startStack(t)
  const account = await slowEndpoint(t, stack, receiver, '/kill', 400)
  // Four at a time, each held 400 ms: the 24 take about 2.4 s, so a kill lands halfway.
  const env = senderEnv(stack.db, { WEBHOOK_CONCURRENCY: '4' })
  const first = startBuiltService(t, 'services/webhook-sender/main.js', env)
  const eventIds = await placeOrders(t, stack, account, EVENTS)

  const underWay = await waitFor(() => deliveredIds(receiver.at('/kill')).size >= 4 && receiver.inFlight().length >= 2, WAIT_MS, 5)
  t.ok(underWay, 'some deliveries are done and others in flight')
  const heldAtKill = receiver.inFlight().map((r) => r.id)
  const doneAtKill = deliveredIds(receiver.at('/kill')).size
  first.kill('SIGKILL')
  await exited(first)
  t.equal(first.signalCode, 'SIGKILL', 'the first sender died outright')
  t.ok(heldAtKill.length > 0, `${heldAtKill.length} deliveries were in flight at the kill`)
  t.ok(doneAtKill < EVENTS, `the kill came before the end (${doneAtKill} of ${EVENTS} delivered)`)
  const receivedAtKill = receiver.at('/kill').length

  startBuiltService(t, 'services/webhook-sender/main.js', env)
  const receipts = await assertEveryEventArrived(t, stack.db.sql, receiver, '/kill', account.endpointId, eventIds)
  const later = receipts.slice(receivedAtKill)
  for (const id of heldAtKill) {
    t.ok(later.some((r) => r.id === id && r.completed), `${id}, cut off by the kill, was delivered again by the new sender`)
  }
})

/**
 * A sender (two at a time) on a Redis of the test's own, with the events of one placement written
 * as deliveries to a slow endpoint at `path`: once the first have gone out and most still wait in
 * the queue, the Redis fault is the caller's. `output()`: what the sender has written.
 */
async function deliveriesQueued(t: Test, path: string) {
  const redis = await startOwnRedis(t)
  const receiver = await startReceiver(t)
  // The placement worker as a process too: BullMQ 6.7's Worker.close() can hang after its Redis
  // restarted, and a process is simply killed at the end.
  const stack = await startStack(t, { worker: false, env: { REDIS_URL: redis.url } })
  startBuiltService(t, 'services/placement-worker/main.js', { ...stack.db.env, REDIS_URL: redis.url, WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
  const account = await slowEndpoint(t, stack, receiver, path, 200)
  const sender = startBuiltService(t, 'services/webhook-sender/main.js', senderEnv(stack.db, { REDIS_URL: redis.url, WEBHOOK_CONCURRENCY: '2', LOG_LEVEL: 'warn' }))
  let output = ''
  sender.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const eventIds = await placeOrders(t, stack, account, EVENTS)

  // Every delivery written and queued, a few delivered, most still waiting in Redis.
  const queued = await waitForValue(
    async () => stack.db.sql`select status from webhook_deliveries where endpoint_id = ${account.endpointId}`,
    (rows) => rows.length === EVENTS && rows.some((row) => row.status === 'succeeded'), WAIT_MS, 20)
  t.ok(queued.held, 'the relay wrote a delivery per event and the first ones went out')
  return { redis, receiver, stack, account, sender, eventIds, queued: queued.value, output: () => output }
}

t.test('Redis restarted empty with deliveries queued: the sweep re-queues them and every event arrives', async (t) => {
  const { redis, receiver, stack, account, sender, eventIds, queued, output } = await deliveriesQueued(t, '/restart')
  const waiting = queued.filter((row) => row.status !== 'succeeded').length
  t.ok(waiting > EVENTS / 2, `${waiting} deliveries were still queued when Redis went`)

  await redis.stop()
  await startOwnRedis(t, redis.port)
  t.comment(`Redis restarted empty on ${redis.port}`)

  await assertEveryEventArrived(t, stack.db.sql, receiver, '/restart', account.endpointId, eventIds)
  t.match(output(), 're-queued webhook deliveries whose job was missing', 'the sweep says it re-queued what Redis lost')
  t.equal(sender.exitCode, null, 'the sender lived through the restart')
})

t.test('FLUSHALL with deliveries queued: the sweep re-queues them and every event arrives', async (t) => {
  const { redis, receiver, stack, account, eventIds, output } = await deliveriesQueued(t, '/flush')
  const { Redis } = await import('ioredis')
  const admin = new Redis(redis.url)
  t.teardown(() => admin.disconnect())
  const prefix = stack.db.env.QUEUE_PREFIX!
  const jobsBefore = (await admin.keys(`${prefix}:webhooks:*`)).length
  t.ok(jobsBefore > 0, `the queue had ${jobsBefore} keys`)
  // What the queue held is not looked at again after the flush: the sender, the relay and the
  // sweep are live and write queue keys again within milliseconds of it.
  t.equal(await admin.flushall(), 'OK', 'FLUSHALL')
  const waiting = (await stack.db.sql`select count(*)::int as n from webhook_deliveries where endpoint_id = ${account.endpointId} and status <> 'succeeded'`)[0]!.n
  t.ok(waiting > 0, `${waiting} deliveries had lost their job`)

  await assertEveryEventArrived(t, stack.db.sql, receiver, '/flush', account.endpointId, eventIds)
  t.match(output(), 're-queued webhook deliveries whose job was missing', 'the sweep says it re-queued what the flush took')
})
