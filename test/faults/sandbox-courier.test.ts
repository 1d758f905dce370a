import type { ChildProcess } from 'node:child_process'
import t, { type Test } from 'tap'
import type { Sql } from '../../shared/db/sql.js'
import { seedAccount } from '../helpers/accounts.js'
import { holdLock, lockWaiters, type HeldLock } from '../helpers/db.js'
import { PLACE } from '../helpers/gateway.js'
import { startBuiltService, waitFor, waitForValue } from '../helpers/processes.js'
import { shipment } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'

// DESIGN.md section 11 and section 13 item 12: the sandbox courier's steps carry the version
// they expect, so a worker killed in the middle of one (its job stalled, its transaction never
// committed) leaves the order to the next worker, which moves it on exactly once. The worker
// runs as a built process, killed with SIGKILL as a crashed pod would be.

const STEP_S = 0.5
const MIN_GAP_MS = 0.9 * STEP_S * 1000
const DELIVER = ['created', 'assigned', 'picked_up', 'delivered']
const EVENTS = ['order.created', 'order.assigned', 'order.picked_up', 'order.delivered']
// A generous deadline (13.7) that a courier stuck on a dead worker's step misses by far.
const WAIT_MS = 30_000

t.test('a sandbox courier killed mid-step resumes without skipping or repeating a status', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false, env: { SANDBOX_STEP_S: String(STEP_S) } })
  const { sql } = db
  const workerEnv = {
    ...db.env, WORKER_PORT: '0', WORKER_OPS_PORT: '0', WORKER_LOCK_MS: '1500', WORKER_STALLED_INTERVAL_MS: '500', SANDBOX_STEP_S: String(STEP_S),
  }
  const startWorker = () => startBuiltService(t, 'services/placement-worker/main.js', workerEnv)
  const kill = async (child: ChildProcess) => {
    const exited = new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))
    child.kill('SIGKILL')
    await exited
  }
  const account = await seedAccount(sql, { sandbox: 100_000 })
  const key = account.testApiKey!
  const place = async (t: Test, count: number): Promise<string[]> => {
    const response = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(key), payload: Array.from({ length: count }, () => shipment()) as never })
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json().orders.map((order: { order_id: string }) => order.order_id)
  }
  const statusesNow = async (ids: string[]) =>
    (await sql`select id, status, version from orders where id in ${sql(ids)} order by id`).map((row) => `${row.id} ${row.status} v${row.version}`).join(', ')

  // The first worker places a batch and starts moving it.
  let worker = startWorker()
  const firstBatch = await place(t, 6)
  const target = firstBatch[0]!
  // Holding the order's row makes the courier's next step on it wait inside its transaction.
  const held = await holdOrderLock(sql, target)
  const firstWaiters = await waitForValue(() => lockWaiters(sql, held.pid), (pids) => pids.length > 0, 10_000)
  t.ok(firstWaiters.held, 'the first worker\'s step on the held order waits inside its transaction')
  t.comment(`killing worker 1 mid-step: ${await statusesNow(firstBatch)}`)
  await kill(worker)

  // A second worker takes over the stalled step (and places a second batch), and is killed in
  // the middle of that same step again, while the others' steps are in flight.
  worker = startWorker()
  const secondBatch = await place(t, 4)
  const secondWaiters = await waitForValue(
    () => lockWaiters(sql, held.pid),
    (pids) => pids.some((pid) => !firstWaiters.value.includes(pid)), 10_000)
  t.ok(secondWaiters.held, `the second worker ran the dead worker's stalled step and waits on the same row (waiters ${secondWaiters.value.join(', ')})`)
  t.comment(`killing worker 2 mid-step: ${await statusesNow([...firstBatch, ...secondBatch])}`)
  await kill(worker)
  await held.release()

  // A third worker finishes every path.
  worker = startWorker()
  const all = [...firstBatch, ...secondBatch]
  const delivered = await waitFor(async () => {
    const [{ open }] = await sql`select count(*)::int as open from orders where id in ${sql(all)} and status <> 'delivered'`
    return open === 0
  }, WAIT_MS)
  t.ok(delivered, `every order is delivered: ${await statusesNow(all)}`)

  const orders = await sql`select id, status, version, history from orders where id in ${sql(all)}`
  t.equal(orders.length, all.length)
  for (const order of orders) {
    const history = order.history as { status: string; at: string }[]
    t.same(history.map((entry) => entry.status), DELIVER, `${order.id}: created → assigned → picked_up → delivered, nothing repeated or skipped`)
    t.equal(order.version, DELIVER.length, `${order.id}: version ${DELIVER.length}`)
    for (let i = 1; i < history.length; i++) {
      const gap = Date.parse(history[i]!.at) - Date.parse(history[i - 1]!.at)
      t.ok(gap >= MIN_GAP_MS, `${order.id}: ${history[i - 1]!.status} → ${history[i]!.status} after ${gap} ms`)
    }
  }

  const events = await sql`select sequence, type, order_id, order_version, livemode from events where business_id = ${account.businessId} order by sequence`
  t.same(events.map((event) => event.sequence), events.map((_, i) => i + 1), 'test sequences run from 1 without gaps')
  t.equal(events.length, all.length * DELIVER.length, 'one event per move, no more')
  t.ok(events.every((event) => event.livemode === false), 'every event is a test event')
  for (const orderId of all) {
    const own = events.filter((event) => event.orderId === orderId)
    t.same(own.map((event) => event.type), EVENTS, `${orderId}: one event per move, in order`)
    t.same(own.map((event) => event.orderVersion), [1, 2, 3, 4], `${orderId}: versions consecutive`)
  }
  const [wallet] = await sql`select balance from wallets where business_id = ${account.businessId} and not livemode`
  t.equal(wallet!.balance, 100_000_00 - all.length * 3500_00, 'each test order was charged once, to the test wallet')
})

/** Holds one order's row lock in a transaction of its own until released; `pid` is its backend. */
function holdOrderLock(sql: Sql, orderId: string): Promise<HeldLock> {
  return holdLock(sql, (tx) => tx`select id from orders where id = ${orderId} for update`)
}
