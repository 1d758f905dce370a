import type { Queue } from 'bullmq'
import { drainInBatches } from '../../shared/drain.js'
import type { Sql } from '../../shared/db/sql.js'
import { deleteDeletedEndpointDeliveries, deleteEmptiedEndpoints, findOverdueDeliveries, relayEvents, type DeliverySweepCursor } from '../../shared/db/webhooks.js'
import { queueDeliveries, webhookJobId, type WebhookJob } from '../../shared/webhooks/queue.js'

const RELAY_BATCH = 500
const SWEEP_BATCH = 500
const PURGE_BATCH = 1000

/**
 * The outbox relay: turns events not yet relayed into delivery rows (committed first) and
 * queues one job per row. Should queueing fail after the commit, the rows are still open and
 * the sweep below queues them. Returns how many events it claimed, so the caller can go again
 * at once while there is a backlog.
 */
export async function relayOnce(sql: Sql, queue: Queue<WebhookJob>): Promise<number> {
  const { claimed, deliveries } = await relayEvents(sql, RELAY_BATCH)
  await queueDeliveries(queue, deliveries)
  return claimed
}

/**
 * Re-queues overdue open deliveries whose job Redis no longer has (a flush, a failover without
 * persistence, a queue call that failed after the row was written), or whose job BullMQ gave up
 * on (stalled too often, or faults past its attempts): that job is removed and queued afresh.
 * Looks at one page from `after`; returns the ids re-queued and where the next sweep takes up
 * (null: from the oldest again).
 */
export async function requeueMissing(sql: Sql, queue: Queue<WebhookJob>, idleS: number, after: DeliverySweepCursor | null, batch = SWEEP_BATCH): Promise<{ requeued: number[]; next: DeliverySweepCursor | null }> {
  const { deliveries: overdue, next } = await findOverdueDeliveries(sql, idleS, batch, after)
  const missing = []
  for (const delivery of overdue) {
    const job = await queue.getJob(webhookJobId(delivery))
    if (job && !(await job.isFailed())) continue
    await job?.remove()
    missing.push(delivery)
  }
  await queueDeliveries(queue, missing)
  return { requeued: missing.map((delivery) => delivery.id), next }
}

/**
 * Removes what deleted endpoints left: their deliveries with their log, a batch a statement (a
 * few milliseconds each on the foreign keys' indexes), then the endpoints. Runs before the
 * re-queue, so their open deliveries are gone before it could queue them again. Returns how many
 * deliveries went.
 */
export async function purgeDeleted(sql: Sql): Promise<number> {
  const deliveries = await drainInBatches(PURGE_BATCH, (limit) => deleteDeletedEndpointDeliveries(sql, limit))
  await deleteEmptiedEndpoints(sql)
  return deliveries
}
