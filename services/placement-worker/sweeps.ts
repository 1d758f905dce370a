import type { Queue } from 'bullmq'
import { findStalePending, settleNotProcessed, type PendingCursor } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { NOT_PROCESSED } from '../../shared/placement/outcome.js'
import type { PlacementJob } from '../../shared/placement-queue.js'

const FINISHED = ['completed', 'failed', 'unknown']
/** Stale pending placements read at once; a sweep pages on until it has seen them all. */
const PAGE = 500

/**
 * Settles the pending placements no job will ever run: older than `orphanAfterS`, and whose
 * job is missing (a gateway died between recording and queueing, or Redis lost its data),
 * failed for good (attempts exhausted, or stalled too often) or finished without settling it. They become `not_processed`
 * with their key freed, so a read answers 503 and a retry with the key places afresh. A job
 * still waiting or running is left alone, and the sweep pages on past it: behind a backlog of
 * waiting jobs (a queue slower than PLACEMENT_ORPHAN_AFTER_S), a newer orphan is still found.
 * Returns the ids settled.
 */
export async function settleOrphans(sql: Sql, queue: Queue<PlacementJob>, orphanAfterS: number, pageSize = PAGE): Promise<string[]> {
  const settled: string[] = []
  let after: PendingCursor | null = null
  do {
    const page = await findStalePending(sql, orphanAfterS, pageSize, after)
    // A page's jobs and their states asked for at once: two round trips a page, however long a
    // backlog it walks (the settler runs every few seconds on every worker).
    const jobs = await Promise.all(page.map(({ id }) => queue.getJob(id)))
    const states = await Promise.all(jobs.map((job) => job?.getState()))
    for (const [i, { id }] of page.entries()) {
      // BullMQ moves a job to `failed` only once no retry is left; a job already `completed`
      // while its row is pending settled nothing (its row was not its business's).
      const state = states[i]
      if (state !== undefined && !FINISHED.includes(state)) continue
      if (await settleNotProcessed(sql, id, NOT_PROCESSED)) settled.push(id)
    }
    after = page.length === pageSize ? page.at(-1) ?? null : null
  } while (after)
  return settled
}
