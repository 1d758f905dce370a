import {
  createMonthPartition, deleteDefaultRowsBefore, deleteSettledDeliveriesBefore, dropPartition, listPartitions,
  tryLockPartitionChanges, type MonthPartition, type PartitionedTable,
} from '../db/partitions.js'
import type { Sql } from '../db/sql.js'
import { drainInBatches } from '../drain.js'

/*
 * Partitioned history and retention (DESIGN 16, docs/scaling.md): events, webhook delivery
 * attempts and order trails are partitioned by UTC month. `keepPartitions` keeps the current
 * month and the next MONTHS_AHEAD made ahead (so the default partition, the safety net, stays
 * empty) and drops a month once all of it is older than its table's retention. It is DDL, so it
 * runs as a role that owns the tables: the migrate CLI after migrating (and its daily CronJob in
 * deploy/k8s), and the placement worker where its role may (`npm start`, compose); where the
 * worker's role may not (deploy/postgres/roles.sql), Postgres refuses it and the worker leaves it
 * to the owner. Retention by table:
 * - events and webhook_attempts: EVENT_RETENTION_D (30), as Stripe keeps events; webhook
 *   deliveries at rest go with them (row deletes: that table is not partitioned);
 * - order_trail_points: PERSONAL_DATA_RETENTION_D (90), the erasure's own period (section 7),
 *   which also deletes an order's trail when it erases the order.
 */

export const MONTHS_AHEAD = 2
const DELIVERY_BATCH = 1000

export interface HistoryRetention {
  /** Days events and webhook attempts are kept. */
  eventRetentionD: number
  /** Days trail points are kept. */
  trailRetentionD: number
}

export interface PartitionUpkeep {
  created: string[]
  dropped: string[]
  /** Rows deleted from default partitions, older than their retention. */
  strays: number
  /** False when another process held the lock and did the work this time. */
  ran: boolean
}

const DAY_MS = 86_400_000

/** The UTC month `offset` months after the one `at` falls in, as `table`'s partition. */
export function monthPartition(table: PartitionedTable, at: Date, offset = 0): MonthPartition {
  const from = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + offset, 1))
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1))
  const name = `${table}_${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`
  return { name, from, to }
}

/** The month a partition name stands for, or null for the default partition or a name of another shape. */
export function partitionMonth(table: PartitionedTable, name: string): MonthPartition | null {
  const match = new RegExp(`^${table}_(\\d{4})_(\\d{2})$`).exec(name)
  if (!match) return null
  return monthPartition(table, new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, 1)))
}

function retentionOf(table: PartitionedTable, retention: HistoryRetention): number {
  return table === 'order_trail_points' ? retention.trailRetentionD : retention.eventRetentionD
}

/**
 * One round of partition upkeep, in one transaction: months made ahead, months past retention
 * dropped, strays in the default partitions past retention deleted. Safe to run from several
 * processes at once: it takes a lock, and a process that finds it taken leaves the work to the
 * holder. Needs a role that owns the tables (Postgres answers 42501 otherwise).
 */
export async function keepPartitions(sql: Sql, retention: HistoryRetention, now = new Date()): Promise<PartitionUpkeep> {
  const upkeep: PartitionUpkeep = { created: [], dropped: [], strays: 0, ran: false }
  await sql.begin(async (tx) => {
    if (!(await tryLockPartitionChanges(tx))) return
    upkeep.ran = true
    for (const table of ['events', 'webhook_attempts', 'order_trail_points'] as const) {
      const existing = new Set(await listPartitions(tx, table))
      for (let offset = 0; offset <= MONTHS_AHEAD; offset++) {
        const month = monthPartition(table, now, offset)
        if (existing.has(month.name)) continue
        await createMonthPartition(tx, table, month)
        upkeep.created.push(month.name)
      }
      const cutoff = new Date(now.getTime() - retentionOf(table, retention) * DAY_MS)
      for (const name of existing) {
        const month = partitionMonth(table, name)
        if (month && month.to <= cutoff) {
          await dropPartition(tx, name)
          upkeep.dropped.push(name)
        }
      }
      upkeep.strays += await deleteDefaultRowsBefore(tx, table, cutoff)
    }
  })
  return upkeep
}

/**
 * Deletes the webhook deliveries at rest (succeeded, failed) made more than `eventRetentionD`
 * days ago, in batches, with what is left of their attempts: rows, not DDL, so any service role
 * may. A delivery still retrying is kept whatever its age. Returns how many went.
 */
export async function pruneSettledDeliveries(sql: Sql, eventRetentionD: number, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - eventRetentionD * DAY_MS)
  return drainInBatches(DELIVERY_BATCH, (limit) => deleteSettledDeliveriesBefore(sql, cutoff, limit))
}
