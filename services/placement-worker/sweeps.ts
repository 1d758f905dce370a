import type { Queue } from 'bullmq'
import { findStalePending, settleNotProcessed } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { NOT_PROCESSED } from '../../shared/placement/outcome.js'
import type { PlacementJob } from '../../shared/placement-queue.js'

const FINISHED = ['completed', 'failed', 'unknown']

/**
 * Settles the pending placements no job will ever run: older than `orphanAfterS`, and whose
 * job is missing (a gateway died between recording and queueing, or Redis lost its data),
 * failed for good (attempts exhausted, or stalled too often) or finished without settling it. They become `not_processed`
 * with their key freed, so a read answers 503 and a retry with the key places afresh. A job
 * still waiting or running is left alone. Returns the ids settled.
 */
export async function settleOrphans(sql: Sql, queue: Queue<PlacementJob>, orphanAfterS: number): Promise<string[]> {
  const settled: string[] = []
  for (const id of await findStalePending(sql, orphanAfterS)) {
    // BullMQ moves a job to `failed` only once no retry is left; a job already `completed`
    // while its row is pending settled nothing (its row was not its business's).
    const job = await queue.getJob(id)
    if (job && !FINISHED.includes(await job.getState())) continue
    if (await settleNotProcessed(sql, id, NOT_PROCESSED)) settled.push(id)
  }
  return settled
}
