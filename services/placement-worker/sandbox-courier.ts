import { Queue, Worker } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { findIdleSandboxOrders, findOrderById, type Order } from '../../shared/db/orders.js'
import type { Sql } from '../../shared/db/sql.js'
import { changeOrder } from '../../shared/orders/change.js'
import { sandboxScenarioOf } from '../../shared/orders/resource.js'
import { nextSandboxStep, SANDBOX_COURIER } from '../../shared/orders/sandbox-courier.js'
import { SANDBOX_QUEUE, sandboxJobId, sandboxJobOptions, type SandboxJob } from '../../shared/orders/sandbox-queue.js'
import { TERMINAL_STATUSES } from '../../shared/orders/state-machine.js'
import type { RedisClient } from '../../shared/redis.js'
import { repeatWithoutOverlap } from '../../shared/repeat.js'
import { errorMessage } from '../../shared/errors/error-message.js'

const SWEEP_BATCH = 200
// A step is overdue, and its job looked for, this long after it should have run.
const OVERDUE_GRACE_S = 2

/** How one step ended: the job's return value. */
type StepResult = 'moved' | 'at_rest' | 'moved_on'

/**
 * The sandbox courier (docs/contracts.md section 8): moves test orders one step every
 * `stepS` seconds as delayed jobs, each naming the version it expects, so a step queued or run
 * twice moves the order once and a stale one does nothing. A sweep queues the next step of
 * test orders that have none (a worker killed between a step's commit and queueing the next,
 * Redis losing its jobs, a manual advance through the API). Lives in the worker process.
 */
export function startSandboxCourier(app: FastifyInstance, options: { sql: Sql; connection: RedisClient; prefix: string; stepS: number; lockMs: number; stalledIntervalMs: number }) {
  const { sql, connection, prefix, stepS, lockMs, stalledIntervalMs } = options
  const stepMs = stepS * 1000
  const queue = new Queue<SandboxJob>(SANDBOX_QUEUE, { connection, prefix })
  queue.on('error', (err) => app.log.debug({ err: err.message }, 'sandbox queue error'))

  const schedule = (order: Pick<Order, 'id' | 'version'>, delayMs: number) => {
    const job = { order_id: order.id, version: order.version }
    return queue.add('step', job, sandboxJobOptions(job, delayMs))
  }

  async function step(job: SandboxJob): Promise<StepResult> {
    const order = await findOrderById(sql, job.order_id)
    if (!order || order.livemode || order.version !== job.version) return 'moved_on'
    const next = nextSandboxStep({ status: order.status, history: order.history, scenario: sandboxScenarioOf(order) })
    if (!next) return 'at_rest'
    const outcome = await changeOrder(sql, { orderId: order.id, scope: { businessId: order.businessId, livemode: false } }, {
      kind: 'advance', to: next.to, courier: next.to === 'assigned' ? SANDBOX_COURIER : null, reason: next.reason, expectedVersion: job.version,
    })
    if (outcome.kind !== 'changed') return 'moved_on'
    if (!TERMINAL_STATUSES.includes(next.to)) await schedule({ id: order.id, version: job.version + 1 }, stepMs)
    return 'moved'
  }

  // A step left active by a dead worker runs again once its lock lapses, as placement jobs do.
  const worker = new Worker<SandboxJob, StepResult>(SANDBOX_QUEUE, (job) => step(job.data), {
    connection, prefix, concurrency: 4, lockDuration: lockMs, stalledInterval: stalledIntervalMs,
  })
  worker.on('error', (err) => app.log.error({ err }, 'sandbox courier error'))

  const sweep = repeatWithoutOverlap(Math.min(stepMs, 5000), async () => {
    for (const order of await findIdleSandboxOrders(sql, stepS + OVERDUE_GRACE_S, SWEEP_BATCH)) {
      const existing = await queue.getJob(sandboxJobId({ order_id: order.id, version: order.version }))
      // A step that failed for good (out of attempts, stalled too often) would hold its id forever.
      if (existing && !(await existing.isFailed())) continue
      if (existing) await existing.remove()
      const dueIn = order.updatedAt.getTime() + stepMs - Date.now()
      await schedule(order, dueIn)
    }
  }, (err) => app.log.warn({ err: errorMessage(err) }, 'sandbox sweep failed'))

  return {
    /** Its queue, for the depth gauge the worker reports with its own. */
    queue,
    /** The first step of each new test order, one step from now. */
    async start(orders: Order[]): Promise<void> {
      const moving = orders.filter((order) => nextSandboxStep({ status: order.status, history: order.history, scenario: sandboxScenarioOf(order) }) !== null)
      await Promise.all(moving.map((order) => schedule(order, stepMs))).catch((err) => {
        app.log.warn({ err: errorMessage(err) }, 'sandbox steps left to the sweep')
      })
    },
    async close(): Promise<void> {
      clearInterval(sweep)
      await worker.close()
      await queue.close()
    },
  }
}
