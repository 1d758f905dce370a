import type { ChildProcess } from 'node:child_process'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import tap, { type Test } from 'tap'
import { DISPATCH_QUEUE, type DispatchJob } from '../../../shared/dispatch/queue.js'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { holdLock, lockWaiters } from '../../helpers/db.js'
import { kmNorth, offersOf, onShift, type OfferRow, type TestCourier } from '../../helpers/couriers.js'
import { freePort, startBuiltService, startOwnRedis, waitFor, waitForValue } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack, type Stack } from '../../helpers/stack.js'

// A crash loses no order (DESIGN 14: rows are the truth). The built dispatcher and placement
// worker run as processes on the file's schema and queue prefix and are killed with SIGKILL at
// chosen points; afterwards every order is offered again and a courier can accept it.
// Small settings (DESIGN 17.5, 13.8): 2 s offers, 1 s retries, a 1.5 s job lock.
const WAIT_MS = 20_000
const DISPATCH_ENV = { DISPATCH_OFFER_S: '2', DISPATCH_RETRY_S: '1', DISPATCHER_LOCK_MS: '1500', DISPATCHER_STALLED_INTERVAL_MS: '500', PLACEMENT_TIMEOUT_MS: '3000' }

/** Starts the built dispatcher on the stack's schema, prefix and Redis; resolves once it answers its health check. */
async function startDispatcherProcess(t: Test, env: Record<string, string>): Promise<ChildProcess> {
  const [port, opsPort] = [await freePort(), await freePort()]
  const child = startBuiltService(t, 'services/dispatcher/main.js', { ...env, DISPATCHER_PORT: String(port), DISPATCHER_OPS_PORT: String(opsPort), LOG_LEVEL: 'warn' })
  const up = await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.status === 200, WAIT_MS)
  if (!up) throw new Error('the dispatcher did not come up')
  return child
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}

/** The dispatch jobs waiting, delayed or running that name any of these orders: their own `offer` jobs, or their placement's `offers` job. */
async function dispatchJobsFor(queue: Queue<DispatchJob>, orderIds: string[]): Promise<string[]> {
  const jobs = await queue.getJobs(['waiting', 'delayed', 'active', 'prioritized'])
  const names = (data: DispatchJob) => data.kind === 'offer' ? [data.order_id] : data.kind === 'offers' ? data.order_ids : []
  return jobs.filter((job) => names(job.data).some((orderId) => orderIds.includes(orderId))).map((job) => job.id ?? job.name)
}

async function orderIdsOf(stack: Stack, placementId: string): Promise<string[]> {
  return (await stack.db.sql<{ id: string }[]>`select id from orders where placement_id = ${placementId} order by position`).map((row) => row.id)
}

/**
 * Waits until each order has a pending offer made after `since`, has its courier accept it, and
 * checks the orders ended assigned once each. Offers last 2 s here (the first case needs the
 * offers made before the crash to expire), so one found pending may expire before its accept
 * lands: a 409 "has expired" sends the wait on to the order's next offer, within the same deadline.
 */
async function offeredAgainAndAccepted(t: Test, stack: Stack, orderIds: string[], couriers: TestCourier[], since: Date): Promise<void> {
  for (const orderId of orderIds) {
    const tried: string[] = []
    const accepted = await waitForValue(async () => {
      const [offer] = await stack.db.sql<OfferRow[]>`
        select id, order_id, courier_id, status from dispatch_offers
        where order_id = ${orderId} and status = 'pending' and created_at > ${since} and not (id = any(${tried}))`
      if (!offer) return null
      tried.push(offer.id)
      const courier = couriers.find((candidate) => candidate.id === offer.courierId)!
      return stack.gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer.id}/accept`, headers: courier.auth })
    }, (response) => response !== null && !(response.statusCode === 409 && /has expired/.test(response.json().message)), WAIT_MS, 50)
    t.ok(accepted.value, `${orderId} is offered again after the crash`)
    if (!accepted.value) continue
    t.equal(accepted.value.statusCode, 200, `${orderId} is accepted: ${accepted.value.body.slice(0, 200)}`)
    if (tried.length > 1) t.comment(`${orderId}: ${tried.length - 1} offer(s) expired before their accept landed`)
  }
  const rows = await stack.db.sql<{ id: string; status: string; courierId: string }[]>`select id, status, courier_id from orders where id in ${stack.db.sql(orderIds)}`
  t.same(rows.map((row) => row.status), orderIds.map(() => 'assigned'), 'every order is assigned')
  t.equal(new Set(rows.map((row) => row.courierId)).size, orderIds.length, 'each to its own courier')
  const [events] = await stack.db.sql`select count(*)::int as count from events where type = 'order.assigned' and order_id in ${stack.db.sql(orderIds)}`
  t.equal(events!.count, orderIds.length, 'one order.assigned each')
}

tap.test('a dispatcher killed in the middle of offering loses no order', async (t) => {
  const stack = await startStack(t, { env: DISPATCH_ENV })
  const account = await seedAccount(stack.db.sql, { balance: 1_000_000 })
  const couriers = await Promise.all(['A', 'B', 'C'].map((name, index) => onShift(stack.gateway, stack.db.sql, `Rider ${name}`, kmNorth(ISLAND, 0.3 + index))))
  // Placed before any dispatcher runs: their jobs wait in the queue.
  const placed = await stack.gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), 'idempotency-key': 'kill-dispatcher' }, payload: [shipment(), shipment(), shipment()] })
  t.equal(placed.statusCode, 201, placed.body)
  const orderIds = await orderIdsOf(stack, placed.json().placement_id)
  const connection = createRedis(stack.db.config, { maxRetriesPerRequest: null })
  const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: stack.db.config.QUEUE_PREFIX })
  t.teardown(async () => {
    await queue.close()
    connection.disconnect()
  })
  const queued = await waitForValue(() => queue.getJobs(['waiting']), (jobs) => jobs.length > 0, WAIT_MS, 50)
  t.same(queued.value.map((job) => job.data), [{ kind: 'offers', order_ids: orderIds }], 'the placement queued one dispatch job for its three orders, ids only')

  // One order's row is held, so the dispatcher is caught inside its offer transaction for it.
  const held = await holdLock(stack.db.sql, (tx) => tx`select id from orders where id = ${orderIds[0]!} for update`)
  const env = { ...stack.db.env, ...DISPATCH_ENV }
  const first = await startDispatcherProcess(t, env)
  const caught = await waitForValue(() => lockWaiters(stack.db.sql, held.pid), (waiters) => waiters.length > 0, WAIT_MS)
  t.ok(caught.held, 'the dispatcher is mid-offer on the held order')
  const others = await waitForValue(async () => Promise.all(orderIds.slice(1).map((orderId) => offersOf(stack.db.sql, orderId))), (rows) => rows.every((offers) => offers.length > 0), WAIT_MS, 50)
  t.ok(others.held, 'and has offered the other two')
  await kill(first)
  await held.release()
  t.same(await offersOf(stack.db.sql, orderIds[0]!), [], 'the held order was not offered before the crash')

  const restarted = new Date()
  await startDispatcherProcess(t, env)
  await offeredAgainAndAccepted(t, stack, orderIds, couriers, restarted)
})

tap.test('a placement worker killed after placing, before it queued dispatch: the sweep offers the orders', async (t) => {
  // A Redis of this test's own, so it can pause writes without touching other files; stopped
  // when the file ends, after this test's services have closed.
  const redis = await startOwnRedis(tap)
  const stack = await startStack(t, { worker: false, env: { ...DISPATCH_ENV, REDIS_URL: redis.url } })
  const env = { ...stack.db.env, ...DISPATCH_ENV, REDIS_URL: redis.url }
  const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 })
  const connection = new Redis(redis.url, { maxRetriesPerRequest: null })
  for (const client of [admin, connection]) client.on('error', () => {})
  const queue = new Queue<DispatchJob>(DISPATCH_QUEUE, { connection, prefix: stack.db.config.QUEUE_PREFIX })
  t.teardown(async () => {
    await admin.call('CLIENT', 'UNPAUSE').catch(() => {})
    await queue.close()
    connection.disconnect()
    admin.disconnect()
  })
  const account = await seedAccount(stack.db.sql, { balance: 1_000_000 })
  const couriers = await Promise.all(['D', 'E', 'F'].map((name, index) => onShift(stack.gateway, stack.db.sql, `Rider ${name}`, kmNorth(ISLAND, 0.3 + index))))

  const [workerPort, workerOpsPort] = [await freePort(), await freePort()]
  const worker = startBuiltService(t, 'services/placement-worker/main.js', { ...env, WORKER_PORT: String(workerPort), WORKER_OPS_PORT: String(workerOpsPort), LOG_LEVEL: 'warn' })
  t.ok(await waitFor(async () => (await fetch(`http://127.0.0.1:${workerPort}/healthz`).catch(() => null))?.status === 200, WAIT_MS), 'the worker is up')

  // The worker is stopped at its wallet debit; Redis takes no writes when it goes on, so it
  // commits the orders and cannot queue their dispatch; then it is killed.
  const wallet = await holdLock(stack.db.sql, (tx) => tx`select balance from wallets where business_id = ${account.businessId} and livemode for update`)
  const placing = stack.gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), 'idempotency-key': 'kill-worker' }, payload: [shipment(), shipment(), shipment()] })
  const blocked = await waitForValue(() => lockWaiters(stack.db.sql, wallet.pid), (waiters) => waiters.length > 0, WAIT_MS)
  t.ok(blocked.held, 'the worker waits on the wallet inside its transaction')
  await admin.call('CLIENT', 'PAUSE', '60000', 'WRITE')
  await wallet.release()
  const committed = await waitForValue(async () => stack.db.sql<{ id: string; placementId: string }[]>`select id, placement_id from orders where business_id = ${account.businessId}`, (rows) => rows.length === 3, WAIT_MS, 20)
  t.equal(committed.value.length, 3, 'the orders are committed')
  await kill(worker)
  await admin.call('CLIENT', 'UNPAUSE')
  const orderIds = await orderIdsOf(stack, committed.value[0]!.placementId)
  t.same(await dispatchJobsFor(queue, orderIds), [], 'no dispatch job was queued for them')
  // Its worker died: the gateway answers once PLACEMENT_TIMEOUT_MS is up; the rows are what counts.
  t.comment(`the placement request was answered ${(await placing).statusCode}`)

  const started = new Date(0)
  await startDispatcherProcess(t, env)
  await offeredAgainAndAccepted(t, stack, orderIds, couriers, started)
})
