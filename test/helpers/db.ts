import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import shift from 'postgres-shift'
import type { Test } from 'tap'
import { commonEnv, loadConfig, type CommonConfig } from '../../shared/config.js'
import { ensureDatabase, migrate, migrationsDir } from '../../shared/db/migrate.js'
import { createSql, type Db, type Sql, type Tx } from '../../shared/db/sql.js'

/** The internal token of every test file's services: the gateway and pricing must share one. */
export const TEST_INTERNAL_TOKEN = 'test-internal-token-0123456789'
export const TEST_QUOTE_SIGNING_KEY = 'test-quote-signing-key-0123456789abcdef'
/** Two keys: `test-new` seals, `test-old` still opens what it sealed (a rotation in progress). */
export const TEST_WEBHOOK_SECRET_KEYS = `test-new:${Buffer.alloc(32, 7).toString('base64')},test-old:${Buffer.alloc(32, 3).toString('base64')}`
/** Every secret a service's config requires, for tests that build a config of their own. */
export const TEST_SECRETS = { INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, QUOTE_SIGNING_KEY: TEST_QUOTE_SIGNING_KEY, WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS }

export interface TestDb {
  config: CommonConfig
  sql: Sql
  /** The environment a child process needs to use the same schema and queue prefix. */
  env: Record<string, string>
}

/** The shared test database (one schema per test file inside it). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'

/**
 * Gives a test file its own migrated schema and its own queue prefix, dropped when the file
 * ends, so files run in parallel and dev data is never touched.
 */
export async function useTestDb(t: Test): Promise<TestDb> {
  const suffix = randomBytes(5).toString('hex')
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: `t_${suffix}`,
    QUEUE_PREFIX: `{courier-test-${suffix}}`,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
    INTERNAL_TOKEN: TEST_INTERNAL_TOKEN,
    QUOTE_SIGNING_KEY: TEST_QUOTE_SIGNING_KEY,
    WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
  }
  const config = loadConfig(commonEnv, env)
  await migrate(config)
  const sql = createSql(config, { max: 4 })
  t.teardown(async () => {
    try {
      await assertWalletsMatchLedger(sql)
    } finally {
      await sql`drop schema if exists ${sql(config.DATABASE_SCHEMA)} cascade`
      await sql.end()
    }
  })
  return { config, sql, env }
}

/**
 * A schema of the test's own, migrated up to `upTo` (a migration number) or to the end, for a
 * test of what a migration does to the rows it finds; `migrateRest` applies the ones after.
 */
export async function schemaAt(t: Test, upTo: number | null): Promise<{ sql: Sql; migrateRest: () => Promise<void> }> {
  // As useTestDb's migrate does: a file run alone on a fresh machine finds no test database yet.
  await ensureDatabase(TEST_DATABASE_URL)
  const schema = `t_at_${randomBytes(4).toString('hex')}`
  const sql = createSql({ DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: 4 }, { max: 4 })
  t.teardown(async () => {
    await sql`drop schema if exists ${sql(schema)} cascade`
    await sql.end()
  })
  await sql`create schema ${sql(schema)}`
  const dir = mkdtempSync(path.join(os.tmpdir(), 'courier-migrations-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  for (const file of readdirSync(migrationsDir).filter((name) => upTo === null || Number(name.slice(0, 5)) <= upTo)) {
    copyFileSync(path.join(migrationsDir, file), path.join(dir, file))
  }
  await shift({ sql, path: dir })
  return { sql, migrateRest: () => shift({ sql, path: migrationsDir }) }
}

/**
 * Sets a live wallet's balance by hand with the ledger entry that explains it (a credit or a
 * debit of the difference), numbered in its wallet as the repositories number theirs, so the
 * invariant every file ends on holds. For a test that needs a balance no placement made.
 */
export async function setBalanceWithEntry(db: Db, businessId: string, entry: { kind: 'credit' | 'debit'; amount: number; reference: string; balanceAfter: number }): Promise<void> {
  const [wallet] = await db<{ entries: number }[]>`
    update wallets set balance = ${entry.balanceAfter}, entries = entries + 1, updated_at = now()
    where business_id = ${businessId} and livemode returning entries`
  if (!wallet) throw new Error(`business ${businessId} has no live wallet`)
  await db`insert into ledger_entries (business_id, livemode, kind, amount, reference, balance_after, seq)
    values (${businessId}, true, ${entry.kind}, ${entry.amount}, ${entry.reference}, ${entry.balanceAfter}, ${wallet.entries})`
}

interface WalletAgainstLedger {
  businessId: string
  livemode: boolean
  balance: number
  ledger: number
  /** The wallet's last entry number, its entry count and its highest number: equal when the entries are numbered 1 … n. */
  entries: number
  count: number
  lastSeq: number
}

/** Every wallet beside the sum of its ledger (credits − debits + refunds) and its entries' numbers. */
export async function walletsAgainstLedger(sql: Sql): Promise<WalletAgainstLedger[]> {
  return sql<WalletAgainstLedger[]>`
    select w.business_id, w.livemode, w.balance, w.entries,
           coalesce(sum(case when l.kind = 'debit' then -l.amount else l.amount end), 0)::bigint as ledger,
           count(l.id)::bigint as count, coalesce(max(l.seq), 0)::bigint as last_seq
    from wallets w left join ledger_entries l on l.business_id = w.business_id and l.livemode = w.livemode
    group by w.business_id, w.livemode, w.balance, w.entries`
}

/** A wallet off its ledger: another balance, below zero, or entries not numbered 1 … n. */
export const walletIsBroken = (wallet: WalletAgainstLedger) =>
  wallet.balance !== wallet.ledger || wallet.balance < 0 || wallet.entries !== wallet.count || wallet.lastSeq !== wallet.count

/**
 * The invariant every test file ends on, whatever it did: each wallet's balance equals its
 * credits minus its debits plus its refunds, none is negative, and its entries are numbered 1 … n
 * with no gap (the numbers are unique per wallet). A breach fails the file.
 * useTestDb's teardown checks it; a test on a schema or database of its own (the launcher's, a
 * Postgres of its own) checks it too.
 */
export async function assertWalletsMatchLedger(sql: Sql): Promise<void> {
  const broken = (await walletsAgainstLedger(sql)).filter(walletIsBroken)
  if (broken.length > 0) throw new Error(`wallet invariant broken: ${JSON.stringify(broken)}`)
}

/** For these businesses: one wallet each, and each wallet equal to its ledger (credits − debits + refunds). */
export async function assertLedgersOf(t: Test, sql: Sql, businesses: string[]): Promise<void> {
  t.ok(businesses.length > 0)
  const wallets = (await walletsAgainstLedger(sql)).filter((wallet) => businesses.includes(wallet.businessId))
  t.equal(wallets.length, businesses.length)
  for (const wallet of wallets) {
    t.equal(wallet.balance, wallet.ledger, `${wallet.businessId}: balance ${wallet.balance} = ledger ${wallet.ledger}`)
    t.notOk(walletIsBroken(wallet), `${wallet.businessId}: entries numbered 1 … ${wallet.count}`)
  }
}

/** A transaction of the test's own that holds its locks until released. */
export interface HeldLock {
  /** Its backend, to find who waits on it. */
  pid: number
  /** Commits it, letting the waiters through. */
  release: () => Promise<void>
}

/** Runs `statement` in a transaction of the test's own and holds it, with every lock it took, until `release`. */
export async function holdLock(sql: Sql, statement: (tx: Tx) => Promise<unknown>): Promise<HeldLock> {
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  let locked!: (pid: number) => void
  const taken = new Promise<number>((resolve) => (locked = resolve))
  const holder = sql.begin(async (tx) => {
    const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`
    await statement(tx)
    locked(pid)
    await held
  })
  const pid = await taken
  return { pid, release: async () => { release(); await holder } }
}

/**
 * The backends waiting, directly or behind another waiter, on the lock `holder` holds. Lock waits
 * of other test files (they run two at a time) never lead back to this holder, so they are not
 * counted, where a look for any waiter would see theirs.
 */
export async function lockWaiters(sql: Sql, holder: number): Promise<number[]> {
  const rows = await sql<{ pid: number; blockers: number[] }[]>`
    select pid, pg_blocking_pids(pid) as blockers from pg_stat_activity where wait_event_type = 'Lock'`
  const found = new Set([holder])
  for (let grew = true; grew;) {
    grew = false
    for (const row of rows) {
      if (!found.has(row.pid) && row.blockers.some((pid) => found.has(pid))) {
        found.add(row.pid)
        grew = true
      }
    }
  }
  found.delete(holder)
  return [...found]
}

/** Every row of every table of the test file's schema, as text: what a dump of the database would show. */
export async function everyRowAsText(sql: Sql): Promise<string> {
  const tables = await sql<{ name: string }[]>`
    select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`
  const rows: string[] = []
  for (const { name } of tables) rows.push(...(await sql<{ row: string }[]>`select t::text as row from ${sql(name)} t`).map((entry) => entry.row))
  return rows.join('\n')
}

/**
 * The plan of the last statement `call` sends, as a prepared statement's generic plan: the one
 * Postgres may settle on after a few calls, made without the parameters' values, so only what the
 * statement's text says can choose a partial index. Sequential scans are off, so an index is chosen
 * whatever the table's size and what matters is which. JSON text of EXPLAIN's answer. The values
 * are written out as literals: they must be the test's own (ids, numbers, names without quotes).
 */
export async function genericPlanOf(t: Test, config: CommonConfig, call: (db: Sql) => Promise<unknown>): Promise<string> {
  const reads = createSql(config, { max: 1 })
  t.teardown(() => reads.end())
  const sent: { text: string; parameters: unknown[] }[] = []
  reads.options.debug = (_connection, text, parameters) => { sent.push({ text, parameters: [...parameters] }) }
  await call(reads)
  const statement = sent.at(-1)
  if (!statement) throw new Error('the driver told no statement')
  const literal = (value: unknown) => (Array.isArray(value) ? `'{${value.join(',')}}'` : typeof value === 'string' ? `'${value}'` : String(value))
  return reads.begin(async (tx) => {
    await tx`set local enable_seqscan = off`
    await tx`set local plan_cache_mode = force_generic_plan`
    await tx.unsafe(`prepare as_sent as ${statement.text}`)
    const [row] = await tx.unsafe<{ 'QUERY PLAN': unknown }[]>(`explain (format json) execute as_sent(${statement.parameters.map(literal).join(', ')})`)
    await tx.unsafe('deallocate as_sent')
    return JSON.stringify(row!['QUERY PLAN'])
  })
}
