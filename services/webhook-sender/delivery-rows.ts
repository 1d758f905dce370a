import type { Sql } from '../../shared/db/sql.js'
import { failDeliveryWithoutEvent, findDeliveriesToAttempt, recordAttempts, recordFailedAttempt, type AttemptRecord, type DeliveryToAttempt, type OpenAttemptRecord } from '../../shared/db/webhooks.js'
import { failureLimit } from '../../shared/webhooks/queue.js'
import { inBatches } from './batches.js'

// A statement reads or writes the rows asked for within this window, up to the most: a burst's
// deliveries share statements (and a write's commit), for a few milliseconds of each job's time.
const BATCH = { windowMs: 2, max: 100 }

/**
 * The sender's reads and writes of delivery rows, in batches: the reads of a few milliseconds go
 * in one statement, and so do the writes of attempts after which the delivery is open or has
 * succeeded (the many of a burst). A caller's promise settles only once its own row is written,
 * so its job is never done in BullMQ before the row that is the truth of its delivery. An attempt
 * that failed its delivery is written alone, in the statement that counts the endpoint's failures.
 * `retryScale` shrinks the span of failures that disables an endpoint as it shrinks the schedule.
 */
export function createDeliveryRows(sql: Sql, { retryScale }: { retryScale: number }) {
  const limit = failureLimit(retryScale)
  const find = inBatches(async (ids: number[]): Promise<PromiseSettledResult<DeliveryToAttempt | null>[]> => {
    const found = new Map((await findDeliveriesToAttempt(sql, ids)).map((row) => [row.delivery.id, row]))
    return ids.map((id) => ({ status: 'fulfilled', value: found.get(id) ?? null }))
  }, BATCH)

  const recordOpen = inBatches(async (records: OpenAttemptRecord[]): Promise<PromiseSettledResult<void>[]> => {
    try {
      await recordAttempts(sql, records)
      return records.map(() => ({ status: 'fulfilled', value: undefined }))
    } catch {
      // One attempt the batch could not write (its endpoint deleted meanwhile, a deadlock) must
      // not fail the others: each is written on its own, and only what fails again fails.
      return Promise.allSettled(records.map((record) => recordAttempts(sql, [record])))
    }
  }, BATCH)

  return {
    /** The delivery with its event and endpoint; null when the delivery is gone. */
    find,
    /** Fails a delivery whose event retention dropped: without it the delivery would be queued again by every sweep, for ever. */
    failWithoutEvent: (deliveryId: number, error: string) => failDeliveryWithoutEvent(sql, deliveryId, error),
    /**
     * Writes an attempt: its log row, the delivery's new state and the endpoint's failure streak.
     * A 410 (`disableReason`, which fails its delivery) disables the endpoint, and so do 10
     * deliveries failed in a row once the endpoint has been failing for 5 days (the days scaled
     * as the retry schedule is).
     */
    async record(record: AttemptRecord, disableReason: string | null): Promise<void> {
      const { status } = record
      if (status === 'failed') return recordFailedAttempt(sql, { ...record, status }, { disableReason, limit })
      return recordOpen({ ...record, status })
    },
  }
}

export type DeliveryRows = ReturnType<typeof createDeliveryRows>
