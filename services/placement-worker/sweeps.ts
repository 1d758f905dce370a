import type { Queue } from 'bullmq'
import { erasePersonalData, findStalePending, settleNotProcessed } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { NOT_PROCESSED } from '../../shared/placement/outcome.js'
import type { PlacementJob } from '../../shared/placement-queue.js'

/** The shipment fields that name, reach or locate a person; erased once the retention ends. */
export const PERSONAL_FIELDS = [
  'recipient_name', 'recipient_phone', 'recipient_email', 'alternate_phone',
  'sender_name', 'sender_phone', 'pickup_address', 'dropoff_address',
]

const ERASE_BATCH = 500
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

/** Erases the personal fields of placements settled more than `days` ago, in batches. */
export async function erasePersonalDataOlderThan(sql: Sql, days: number): Promise<number> {
  let total = 0
  for (;;) {
    const erased = await sql.begin((tx) => erasePersonalData(tx, days, PERSONAL_FIELDS, ERASE_BATCH))
    total += erased
    if (erased < ERASE_BATCH) return total
  }
}
