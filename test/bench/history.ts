import { listEvents } from '../../shared/db/events.js'
import { migrate } from '../../shared/db/migrate.js'
import { createMonthPartition } from '../../shared/db/partitions.js'
import { createSql, type Sql } from '../../shared/db/sql.js'
import { monthPartition } from '../../shared/orders/history.js'
import { createBusiness } from '../../shared/db/businesses.js'
import { newUuid } from '../../shared/ids.js'

/*
 * The history case (DESIGN 16): does reading a business's events stay as fast with 10 million of
 * them as with 100 000? One business of a schema of its own is filled with events in SQL
 * (generate_series, a few hundred bytes each, spread over the last 60 days so they fall in three
 * month partitions), first to `small` then to `large`, and at each size the two reads of
 * GET /v2/business/events are timed through the repository function the route calls
 * (`listEvents`, on a pool made as the gateway makes its own): the first page (after=0, the
 * default 20 + 1), the backfill from a random point (after=N, the largest page, 100 + 1), and
 * the first page of a type no event has (type=order.returned), which finds nothing.
 * Postgres alone is measured, not the gateway: nothing else is started. Each query is also
 * EXPLAINed as it was sent (the driver's own text and parameters) to show it runs on an index,
 * and the partitions' scan counters say no sequential scan was made. The schema is dropped after.
 */

export interface HistoryOptions {
  databaseUrl: string
  schema: string
  small: number
  large: number
  /** Timed calls per query and size. */
  calls: number
  log: (line: string) => void
}

export interface QueryFigures {
  query: string
  size: number
  p50Ms: number
  p99Ms: number
  /** The plan's nodes, outermost first, and whether every month partition holding rows is read through an index. */
  plan: string[]
  usesIndex: boolean
}

export interface HistoryResult {
  small: number
  large: number
  calls: number
  fillSeconds: Record<string, number>
  figures: QueryFigures[]
  /** p99 at the large size over p99 at the small one, per query. */
  p99Growth: Record<string, number>
  /** Sequential scans of the events partitions while the timed calls ran. */
  seqScans: number
  explains: Record<string, string>
}

const SPREAD_DAYS = 60
const CHUNK = 500_000
const FIRST_PAGE = 21
const BACKFILL_PAGE = 101

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** Appends events `from + 1` … `to` of the business, numbered and timed in order across the spread. */
async function fill(sql: Sql, businessId: string, from: number, to: number, total: number, log: (line: string) => void): Promise<void> {
  for (let start = from + 1; start <= to; start += CHUNK) {
    const end = Math.min(to, start + CHUNK - 1)
    // Event n of `total` is stamped n/total of the way from 60 days ago to now: sequence follows time.
    await sql`
      insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at)
      select 'evt_' || lpad(n::text, 20, '0'), ${businessId}, true, n,
        (array['order.created','order.assigned','order.picked_up','order.delivered'])[1 + n % 4],
        'ORD-' || lpad((n / 4)::text, 12, '0'), 1 + n % 4,
        json_build_object('order', json_build_object('order_id', 'ORD-' || lpad((n / 4)::text, 12, '0'), 'status', 'created', 'price', 3500,
          'pickup_address', 'Victoria Island, Lagos', 'dropoff_address', 'Ikeja, Lagos', 'recipient_name', 'Chidi Okafor', 'version', 1 + n % 4)),
        now() - make_interval(secs => ${SPREAD_DAYS * 86400} * (1 - n::float8 / ${total}))
      from generate_series(${start}::bigint, ${end}::bigint) n`
    log(`    history: ${end.toLocaleString('en')} events`)
  }
  await sql`insert into event_sequences (business_id, livemode, last_sequence) values (${businessId}, true, ${to})
    on conflict (business_id, livemode) do update set last_sequence = excluded.last_sequence`
  await sql`analyze events`
}

/**
 * Sequential scans of the month partitions so far (the default partition, empty, is scanned by
 * every query that cannot prune it and costs nothing). `reads` first flushes its counters.
 */
async function seqScans(sql: Sql, reads: Sql): Promise<number> {
  await reads`select pg_stat_force_next_flush()`
  const [row] = await sql<{ scans: number }[]>`
    select coalesce(sum(seq_scan), 0)::int as scans from pg_stat_user_tables
    where schemaname = current_schema() and relname ~ '^events_[0-9]{4}_[0-9]{2}$'`
  return row!.scans
}

export async function historyCase(options: HistoryOptions): Promise<HistoryResult> {
  const config = { DATABASE_URL: options.databaseUrl, DATABASE_SCHEMA: options.schema, DATABASE_POOL_MAX: 2 }
  const admin = createSql({ ...config, DATABASE_SCHEMA: 'public' }, { max: 1 })
  await admin`drop schema if exists ${admin(options.schema)} cascade`
  await migrate(config)
  const sql = createSql(config, { max: 2 })
  // The gateway's pool: the same driver options and session bounds, one connection timed at a time.
  const reads = createSql(config, { max: 1, timeouts: { PG_STATEMENT_TIMEOUT_MS: 5000, PG_LOCK_TIMEOUT_MS: 5000, PG_IDLE_TX_TIMEOUT_MS: 30000 } })
  // The last statement the driver sent on the timed pool, to EXPLAIN exactly that.
  let sent: { text: string; parameters: unknown[] } | null = null
  reads.options.debug = (_connection, text, parameters) => { sent = { text, parameters: [...parameters] } }
  const scope = { businessId: newUuid(), livemode: true }
  const result: HistoryResult = { small: options.small, large: options.large, calls: options.calls, fillSeconds: {}, figures: [], p99Growth: {}, seqScans: 0, explains: {} }
  try {
    // The months the spread covers, as the worker would have made them when they came.
    await sql.begin(async (tx) => {
      for (let offset = -Math.ceil(SPREAD_DAYS / 28); offset < 0; offset++) await createMonthPartition(tx, 'events', monthPartition('events', new Date(), offset))
    })
    await createBusiness(sql, scope.businessId, { name: 'History Ltd', phone: '+2348010000000', address: '12 Admiralty Way, Lekki', state: 'Lagos', latitude: 6.4433, longitude: 3.4723, currency: 'NGN' })
    let filled = 0
    for (const size of [options.small, options.large]) {
      const started = performance.now()
      await fill(sql, scope.businessId, filled, size, options.large, options.log)
      filled = size
      result.fillSeconds[String(size)] = Math.round((performance.now() - started) / 1000)
      // Each call must come back with a full page: a plan that found nothing would be fast for nothing.
      const queries: [string, number, () => Promise<unknown[]>][] = [
        ['first page (after=0, 20)', FIRST_PAGE, () => listEvents(reads, scope, { after: 0, types: null, limit: FIRST_PAGE })],
        ['backfill (after=random, 100)', BACKFILL_PAGE, () => listEvents(reads, scope, { after: Math.floor(Math.random() * (size - BACKFILL_PAGE)), types: null, limit: BACKFILL_PAGE })],
        // A type none of these events has: the read must not walk them all to say so.
        ['a type with no events (type=order.returned, after=0, 20)', 0, () => listEvents(reads, scope, { after: 0, types: ['order.returned'], limit: FIRST_PAGE })],
      ]
      for (const [query, expected, call] of queries) {
        for (let i = 0; i < 50; i++) await call()
        const scansBefore = await seqScans(sql, reads)
        const times: number[] = []
        let short = 0
        for (let i = 0; i < options.calls; i++) {
          const t0 = performance.now()
          const rows = await call()
          times.push(performance.now() - t0)
          if (rows.length < expected) short++
        }
        if (short > 0) throw new Error(`${query} at ${size}: ${short} calls returned less than a full page`)
        const last = sent as { text: string; parameters: unknown[] } | null
        result.seqScans += (await seqScans(sql, reads)) - scansBefore
        times.sort((a, b) => a - b)
        if (!last) throw new Error('the driver told no statement')
        const [plan] = await sql.unsafe<{ 'QUERY PLAN': unknown }[]>(`explain (format json) ${last.text}`, last.parameters as never[])
        const nodes = planNodes((plan!['QUERY PLAN'] as { Plan: PlanNode }[])[0]!.Plan)
        const populated = await populatedPartitions(sql)
        const monthScans = nodes.filter((node) => populated.some((name) => node.endsWith(` on ${name}`)))
        const text = await sql.unsafe<{ 'QUERY PLAN': string }[]>(`explain (analyze, buffers) ${last.text}`, last.parameters as never[])
        result.explains[`${query} @ ${size}`] = text.map((row) => row['QUERY PLAN']).join('\n')
        const figures = {
          query, size, p50Ms: round(percentile(times, 50)), p99Ms: round(percentile(times, 99)),
          plan: nodes, usesIndex: monthScans.length > 0 && monthScans.every((node) => node.startsWith('Index')),
        }
        result.figures.push(figures)
        options.log(`  history ${size.toLocaleString('en')} events, ${query}: p50 ${figures.p50Ms} ms p99 ${figures.p99Ms} ms; plan ${nodes.join(' > ')}`)
      }
    }
    for (const query of new Set(result.figures.map((figure) => figure.query))) {
      const [small, large] = [options.small, options.large].map((size) => result.figures.find((figure) => figure.query === query && figure.size === size)!)
      result.p99Growth[query] = round(large!.p99Ms / Math.max(small!.p99Ms, 0.01))
    }
    return result
  } finally {
    await reads.end()
    await sql.end()
    if (!process.env.BENCH_KEEP) await admin`drop schema if exists ${admin(options.schema)} cascade`
    await admin.end()
  }
}

/** The month partitions holding rows (as of the last ANALYZE). */
async function populatedPartitions(sql: Sql): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select relname as name from pg_class
    where relnamespace = current_schema()::regnamespace and relname ~ '^events_[0-9]{4}_[0-9]{2}$' and reltuples > 0`
  return rows.map((row) => row.name)
}

interface PlanNode { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string; Plans?: PlanNode[] }

/** The plan's nodes, outermost first: `Index Scan using … on events_2026_11`, `Merge Append`. */
function planNodes(node: PlanNode): string[] {
  const using = node['Index Name'] ? ` using ${node['Index Name']}` : ''
  const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : ''
  return [`${node['Node Type']}${using}${on}`, ...(node.Plans ?? []).flatMap(planNodes)]
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100
}

/** The case's lines for the bench's output. */
export function formatHistory(result: HistoryResult): string {
  const lines = [
    `history: one business's events at ${result.small.toLocaleString('en')} and ${result.large.toLocaleString('en')} rows, ${result.calls} calls per query and size, through listEvents (the route's repository call)`,
    '| query | events | p50 ms | p99 ms | on an index |',
    '|---|---|---|---|---|',
    ...result.figures.map((figure) => `| ${figure.query} | ${figure.size.toLocaleString('en')} | ${figure.p50Ms} | ${figure.p99Ms} | ${figure.usesIndex ? 'yes' : 'NO'} |`),
    ...Object.entries(result.p99Growth).map(([query, growth]) => `${query}: p99 at ${result.large.toLocaleString('en')} / at ${result.small.toLocaleString('en')} = ${growth}x`),
    `sequential scans of the month partitions during the timed calls: ${result.seqScans}`,
    ...result.figures.map((figure) => `plan, ${figure.query} at ${figure.size.toLocaleString('en')}: ${figure.plan.join(' > ')}`),
  ]
  return lines.join('\n')
}
