import type { Sql } from './sql.js'

/** A pool's sessions as Postgres sees them. */
export interface PoolSessions {
  /** Sessions running a statement or holding a transaction open, this query's own left out: all
   * of them busy means the count itself could not have run, so it reads full only by its timeout. */
  busy: number
  /** Every session the pool has open. */
  open: number
}

/**
 * The sessions of the pool this runs on: each pool has its own `application_name` (sql.ts), so
 * the query counts exactly its siblings.
 */
export async function poolSessions(sql: Sql): Promise<PoolSessions> {
  const [row] = await sql<PoolSessions[]>`
    select count(*) filter (where state <> 'idle' and pid <> pg_backend_pid())::int as busy, count(*)::int as open
    from pg_stat_activity
    where application_name = current_setting('application_name') and datname = current_database()`
  return row!
}
