import { hostname } from 'node:os'
import postgres from 'postgres'
import type { CommonConfig, ReadReplicaConfig, ServingConfig } from '../config.js'
import { errorCode } from '../errors/error-message.js'

/** Our pool's type: bigint columns (counts, sequences, kobo sums) parse to numbers. */
type Types = { bigint: number }
export type Sql = postgres.Sql<Types>
export type Tx = postgres.TransactionSql<Types>
/** Either the pool or an open transaction: repositories accept both. */
export type Db = Sql | Tx

/**
 * Names written into a statement's own text as a list of quoted literals (`'a', 'b'`): for a
 * condition a partial index's predicate must be seen to cover, which the planner cannot prove
 * from a parameter when it makes a prepared statement's generic plan. The code's own constants
 * only, never a caller's input.
 */
export function literalList(db: Db, names: readonly string[]) {
  return db.unsafe(names.map((name) => `'${name}'`).join(', '))
}

/**
 * The rows of a sweep past where the last one stopped, in `(timeColumn, idColumn)` order: `at` is
 * the last row's time as Postgres's text, exact to the microsecond, and sent back as text (a
 * timestamptz parameter would pass through a JavaScript Date and lose the microseconds, and the
 * sweep would take that row again). The first comparison alone is what an index on the time uses.
 */
export function pastCursor(db: Db, timeColumn: string, idColumn: string, cursor: { at: string; id: string | number }) {
  return db`${db(timeColumn)} >= ${cursor.at}::text::timestamptz and (${db(timeColumn)} > ${cursor.at}::text::timestamptz or ${db(idColumn)} > ${cursor.id})`
}

/** The bounds a service's sessions run under; migrations and the CLI go without them. */
export type SessionTimeouts = Pick<ServingConfig, 'PG_STATEMENT_TIMEOUT_MS' | 'PG_LOCK_TIMEOUT_MS' | 'PG_IDLE_TX_TIMEOUT_MS'>

let pools = 0

/**
 * The `application_name` of a new pool: unique per pool (host, process, pool number), so a pool
 * can count its own sessions in `pg_stat_activity` (shared/db/pool.ts); at most 63 bytes, as
 * Postgres keeps it.
 */
function poolName(): string {
  pools++
  return `courier ${hostname().slice(0, 40)} ${process.pid}.${pools}`
}

/**
 * Opens the one connection pool of a process. `bigint` columns hold kobo, far below 2^53,
 * so they are read as plain numbers; the schema is pinned through `search_path` so every
 * test file can own a schema of its own. Column names read in camelCase (`business_id` is
 * `businessId`), so a repository returns its rows as they come. With `timeouts`, no statement, lock wait or idle
 * transaction of the pool outlives its bound: Postgres cancels it and the caller answers 503.
 */
export function createSql(config: Pick<CommonConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATABASE_POOL_MAX'>, options: { max?: number; timeouts?: SessionTimeouts } = {}): Sql {
  const { timeouts } = options
  const bounds = timeouts
    ? { statement_timeout: timeouts.PG_STATEMENT_TIMEOUT_MS, lock_timeout: timeouts.PG_LOCK_TIMEOUT_MS, idle_in_transaction_session_timeout: timeouts.PG_IDLE_TX_TIMEOUT_MS }
    : {}
  return postgres(config.DATABASE_URL, {
    max: options.max ?? config.DATABASE_POOL_MAX,
    onnotice: () => {},
    connection: { search_path: config.DATABASE_SCHEMA, application_name: poolName(), ...bounds },
    types: {
      bigint: { to: 20, from: [20], serialize: (value: number) => String(value), parse: (value: string) => Number(value) },
    },
    // Column names only (not postgres.camel, which also renames keys inside json values): a row
    // reads as the domain shape, and stored shipments and outcomes come back byte for byte.
    transform: { column: { from: postgres.toCamel, to: postgres.fromCamel } },
    connect_timeout: 5,
  })
}

/**
 * The pool list and backfill reads go to (DESIGN 16): a streaming replica at `DATABASE_READ_URL`,
 * with the primary's schema, size and session bounds; the primary's own pool when it is unset. A
 * list read there may lag a write just made on the primary by the replica's replay lag, so only
 * lists take it: single-resource reads and every write stay on `primary` (docs/scaling.md).
 * The caller ends it when it is not `primary`.
 */
export function createReadSql(config: Pick<CommonConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATABASE_POOL_MAX'> & ReadReplicaConfig, primary: Sql, options: { max?: number; timeouts?: SessionTimeouts } = {}): Sql {
  if (config.DATABASE_READ_URL === undefined) return primary
  return createSql({ ...config, DATABASE_URL: config.DATABASE_READ_URL }, options)
}

/** Ends the read pool when it is a pool of its own (a replica's), not the primary's. */
export async function endReadSql(reads: Sql, primary: Sql): Promise<void> {
  if (reads !== primary) await reads.end({ timeout: 5 })
}

/** SQLSTATE codes this service branches on. */
export const PG = {
  uniqueViolation: '23505',
  checkViolation: '23514',
  lockNotAvailable: '55P03',
  insufficientPrivilege: '42501',
  queryCanceled: '57014',
} as const

/** True for errors that mean the database is out of reach rather than that the query is wrong. */
export function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: string })?.code ?? ''
  return ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', '57P01', '57P03', '08006', '08001'].includes(code)
}

/**
 * True for a statement or lock wait that ran past the session's bound (statement_timeout,
 * lock_timeout): the database is busy, not wrong, so the request answers 503 and may be retried.
 */
export function isTimeoutError(err: unknown): boolean {
  const code = errorCode(err)
  return code === PG.queryCanceled || code === PG.lockNotAvailable
}

/** True when the session's role may not do what it asked (a service role asked for DDL). */
export function isPrivilegeError(err: unknown): boolean {
  return errorCode(err) === PG.insufficientPrivilege
}

/**
 * The database's clock, to the millisecond as JSON shows it. `clock_timestamp()`, not `now()`:
 * sent after a row lock in the same pipeline, it reads the time the lock was held, so a change
 * that waited for another is never stamped before it.
 */
export async function transactionNow(tx: Tx): Promise<Date> {
  const [row] = await tx<{ now: Date }[]>`select date_trunc('milliseconds', clock_timestamp()) as now`
  return row!.now
}

/** The port the driver dials for a database URL: the URL's, else PGPORT, else 5432. */
export function databasePort(url: URL): number {
  return Number(url.port || process.env.PGPORT || 5432)
}

/** Where a database URL points, for a message: host, port and database, never the credentials. */
export function databaseWhere(url: string): string {
  try {
    const parsed = new URL(url)
    return `${parsed.hostname}:${databasePort(parsed)}${parsed.pathname}`
  } catch {
    return 'DATABASE_URL'
  }
}
