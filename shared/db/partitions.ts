import type { Db, Sql, Tx } from './sql.js'

/**
 * The tables partitioned by month (migration 00022) and the time column each is partitioned on.
 * Each has month partitions named `<table>_YYYY_MM` (UTC months) and a default partition,
 * `<table>_default`, that catches a row no month holds.
 */
export const PARTITIONED = { events: 'created_at', webhook_attempts: 'at', order_trail_points: 'at' } as const
export type PartitionedTable = keyof typeof PARTITIONED

/** One month partition: its name and bounds (`from` inclusive, `to` exclusive). */
export interface MonthPartition {
  name: string
  from: Date
  to: Date
}

// DDL takes no bind parameters: names come from PARTITIONED and digits, bounds from a Date.
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`
const literal = (at: Date) => `'${at.toISOString()}'`

/**
 * Takes the schema's lock on partition changes for the transaction; false when another process
 * (another worker) holds it and is doing the same work.
 */
export async function tryLockPartitionChanges(tx: Tx): Promise<boolean> {
  const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(hashtext('courier-partitions:' || current_schema())) as locked`
  return row!.locked
}

/** The names of a table's partitions, the default one included. */
export async function listPartitions(db: Db, table: PartitionedTable): Promise<string[]> {
  const rows = await db<{ name: string }[]>`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = to_regclass(${table}) order by c.relname`
  return rows.map((row) => row.name)
}

/**
 * Creates a month partition. Rows of that month already in the default partition (written while
 * the month had no partition of its own) move into it: the default is detached, the month made,
 * its rows moved, and the default attached again, all in the caller's transaction.
 */
export async function createMonthPartition(tx: Tx, table: PartitionedTable, month: MonthPartition): Promise<void> {
  const column = PARTITIONED[table]
  const fallback = `${table}_default`
  const bounds = `for values from (${literal(month.from)}) to (${literal(month.to)})`
  const [{ stranded }] = await tx<{ stranded: boolean }[]>`
    select exists (select 1 from ${tx(fallback)} where ${tx(column)} >= ${month.from} and ${tx(column)} < ${month.to}) as stranded`
  if (!stranded) {
    await tx.unsafe(`create table if not exists ${ident(month.name)} partition of ${ident(table)} ${bounds}`)
    return
  }
  await tx.unsafe(`alter table ${ident(table)} detach partition ${ident(fallback)}`)
  await tx.unsafe(`create table ${ident(month.name)} partition of ${ident(table)} ${bounds}`)
  await tx.unsafe(`
    with moved as (delete from ${ident(fallback)} where ${ident(column)} >= ${literal(month.from)} and ${ident(column)} < ${literal(month.to)} returning *)
    insert into ${ident(table)} overriding system value select * from moved`)
  await tx.unsafe(`alter table ${ident(table)} attach partition ${ident(fallback)} default`)
}

/** Drops a partition with every row it holds. */
export async function dropPartition(tx: Tx, name: string): Promise<void> {
  await tx.unsafe(`drop table if exists ${ident(name)}`)
}

/** Deletes the default partition's rows older than `before` (rows no month held); how many. */
export async function deleteDefaultRowsBefore(tx: Tx, table: PartitionedTable, before: Date): Promise<number> {
  const result = await tx`delete from ${tx(`${table}_default`)} where ${tx(PARTITIONED[table])} < ${before}`
  return result.count
}

/**
 * Deletes up to `limit` webhook deliveries at rest (succeeded or failed) made before `before`,
 * with what is left of their attempts; how many.
 */
export async function deleteSettledDeliveriesBefore(sql: Sql, before: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from webhook_deliveries where id = any(array(
      select id from webhook_deliveries where created_at < ${before} and status in ('succeeded', 'failed') limit ${limit}))`
  return result.count
}
