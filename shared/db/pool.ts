import type { Sql } from './sql.js'

/** A pool's sessions as Postgres sees them. */
export interface PoolSessions {
  /** Sessions running a statement or holding a transaction open (this query's own included). */
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
    select count(*) filter (where state <> 'idle')::int as busy, count(*)::int as open
    from pg_stat_activity
    where application_name = current_setting('application_name') and datname = current_database()`
  return row!
}
