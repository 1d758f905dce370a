import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes, randomInt } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createBusiness } from '../../shared/db/businesses.js'
import type { NewEvent, StoredEvent } from '../../shared/db/events.js'
import { migrate } from '../../shared/db/migrate.js'
import { insertOrders, type Order, type OrderBatch, type OrderScope, type StoredShipment } from '../../shared/db/orders.js'
import { eraseOrders } from '../../shared/db/personal-data.js'
import { createPendingPlacement, openPlacement, settlePlacement } from '../../shared/db/placements.js'
import { DEFAULT_PLATFORM_RATES } from '../../shared/db/platform-rates.js'
import { createSql, type Db, type Sql } from '../../shared/db/sql.js'
import { createWallet, creditWallet, debitWalletIfCovered } from '../../shared/db/wallets.js'
import { newEventId, newOrderId, newTrackingToken, newUuid } from '../../shared/ids.js'
import { PERSONAL_FIELDS } from '../../shared/orders/personal-data.js'
import { orderAsShown, toEventResource } from '../../shared/orders/resource.js'
import { TEST_DATABASE_URL } from '../helpers/db.js'
import { shipment } from '../helpers/shipments.js'
import { BATCH_LZ4, BATCH_PGLZ, NO_EVENTS, THIN_CREATED, TODAY, type EventShape, type ShapeReads } from './event-shapes.js'

/*
 * Event data shape (performance issue, item 2; docs/performance.md "Event data shape: proposal").
 * What the events of a 100-order placement cost inside its transaction, on Postgres alone, today
 * and in the shapes of event-shapes.ts. Each shape gets a schema of its own made by the project's
 * migrations (plus the shape's DDL) and one connection, so its Postgres backend's CPU is its own.
 * Placements go round the shapes in turn; each runs the worker's statements one after another
 * (lock, orders, outcome, events, debit, commit), each timed and its WAL measured by
 * pg_current_wal_insert_lsn() before and after. WAL is the cluster's, so another session's writes
 * in between would count: a `select 1` measured the same way is the noise floor. Then the reads
 * the contract needs (backfill by after=, an event by id, the relay's expansion of one append),
 * checked for gapless pages and byte-equal events, and erasures of one order and of a placement.
 *
 *   npx tsc -p tsconfig.json && node dist/test/bench/event-shape.js
 *
 * Knobs: EVENT_SHAPE_PLACEMENTS (200, after 20 not counted), EVENT_SHAPE_ORDERS (100),
 * EVENT_SHAPE_READS (300 calls per read and shape), EVENT_SHAPE_ERASURES (40 orders, a quarter as
 * many placements), EVENT_SHAPE_KEEP=1 keeps the schemas. Results also go to
 * test/bench/results/event-shape-<time>.json.
 */

const PLACEMENTS = Number(process.env.EVENT_SHAPE_PLACEMENTS ?? 200)
const WARMUP = 20
const ORDERS = Number(process.env.EVENT_SHAPE_ORDERS ?? 100)
const READS = Number(process.env.EVENT_SHAPE_READS ?? 300)
const ERASURES = Number(process.env.EVENT_SHAPE_ERASURES ?? 40)
const PAGE = 101
const PRICE = 350_000
const SHAPES = [TODAY, THIN_CREATED, BATCH_LZ4, BATCH_PGLZ, NO_EVENTS]
const STEPS = ['open', 'orders', 'outcome', 'events', 'wallet', 'commit'] as const

/** One shape's schema, connection, business, and what it wrote. */
interface Lane {
  shape: EventShape
  sql: Sql
  schema: string
  backendPid: number
  scope: OrderScope
  /** Per counted placement, ms and WAL bytes per step. */
  samples: { ms: Record<string, number>; wal: Record<string, number> }[]
  /** Per counted placement, ms and WAL bytes of one later order change's append (its own transaction). */
  changes: { ms: number; wal: number }[]
  cpuTicks: number
  /** Every event id, in sequence order (the id of sequence n is at n - 1). */
  eventIds: string[]
  placements: { id: string; orderIds: string[]; first: number; last: number }[]
  /** The event bodies as written, by id: a sample to compare reads with. */
  written: Map<string, string>
  dataBytes: number[]
}

async function openLane(shape: EventShape, run: string, index: number): Promise<Lane> {
  const schema = `bench_event_shape_${run}_${index}`
  const config = { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema, DATABASE_POOL_MAX: 1 }
  await migrate(config)
  const sql = createSql(config, { max: 1 })
  for (const statement of shape.ddl) await sql.unsafe(statement)
  const businessId = newUuid()
  await sql.begin(async (tx) => {
    await createBusiness(tx, businessId, { name: 'Ada Stores', phone: '+2348010000000', address: '12 Admiralty Way, Lekki', state: 'Lagos', latitude: 6.4433, longitude: 3.4723, currency: 'NGN' })
    await createWallet(tx, businessId, 'NGN')
    await creditWallet(tx, businessId, 1e15, 'bench')
  })
  const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`
  return { shape, sql, schema, backendPid: pid, scope: { businessId, livemode: true }, samples: [], changes: [], cpuTicks: 0, eventIds: [], placements: [], written: new Map(), dataBytes: [] }
}

/** Where the cluster's WAL insert position is, in bytes. */
async function walAt(db: Db): Promise<number> {
  const [row] = await db<{ at: number }[]>`select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::float8 as at`
  return row!.at
}

/** CPU ticks (1/100 s) a Postgres backend has used, from /proc (Postgres runs on this machine). */
function backendTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

const FIRST = ['Chidi', 'Amaka', 'Tunde', 'Ngozi', 'Emeka', 'Funke', 'Ibrahim', 'Zainab', 'Segun', 'Halima']
const LAST = ['Okafor', 'Adeyemi', 'Bello', 'Eze', 'Lawal', 'Nwosu', 'Balogun', 'Musa', 'Okoro', 'Danjuma']
const STREETS = ['Allen Avenue', 'Opebi Road', 'Toyin Street', 'Obafemi Awolowo Way', 'Adeniyi Jones Avenue', 'Kodesoh Street']
const ITEMS = ['Phone case', 'Wireless earbuds', 'Ankara fabric, 6 yards', 'Laptop charger', 'Skincare set', 'Sneakers, size 43']
const pick = <T>(list: T[]): T => list[randomInt(list.length)]!
const digits = (count: number) => Array.from({ length: count }, () => randomInt(10)).join('')

/** A shipment as the worker stores it, with values that differ from order to order as real ones do. */
function variedShipment(): StoredShipment {
  return {
    ...shipment({
      dropoff_address: `${1 + randomInt(200)} ${pick(STREETS)}, Ikeja`,
      recipient_name: `${pick(FIRST)} ${pick(LAST)}`,
      recipient_phone: `+23480${digits(8)}`,
      item_name: pick(ITEMS),
      weight: 0.5 + randomInt(40) / 10,
      quantity: 1 + randomInt(3),
      dropoff_latitude: 6.55 + randomInt(1000) / 10_000,
      dropoff_longitude: 3.30 + randomInt(1000) / 10_000,
    }),
    pickup_address: '12 Admiralty Way, Lekki',
    pickup_state: 'Lagos',
    sender_name: 'Ada Stores',
    sender_phone: '+2348010000000',
  }
}

/** The order a priced shipment becomes, as the worker's newOrder makes it. */
function placedOrder(batch: OrderBatch, position: number, sent: StoredShipment): Order {
  const trackingToken = newTrackingToken()
  return {
    id: newOrderId(), placementId: batch.placementId, businessId: batch.businessId, livemode: batch.livemode, position,
    status: 'created', version: 1, price: PRICE, currency: batch.currency, pricingModel: 'rate_card', vehicleType: 'bike',
    optionId: 'opt_BIKE5KG', optionLabel: 'Up to 5 kg', deliveryMode: 'MOTORBIKE', distanceKm: 19.47,
    fromZoneName: 'Island', toZoneName: 'Ikeja', shipment: sent, courier: null, courierId: null,
    pickupLat: 6.45, pickupLng: 3.4, dropoffLat: Number(sent.dropoff_latitude), dropoffLng: Number(sent.dropoff_longitude),
    deliveryPin: null, pinAttempts: 0, pinVerifiedAt: null, deliveredLat: null, deliveredLng: null, photoKey: null, photoUrl: null,
    trackingUrl: `https://track.example.com/t/${trackingToken}`, trackingToken, history: batch.history, assignedAt: null,
    refundedAmount: 0, createdAt: batch.createdAt, updatedAt: batch.createdAt,
  }
}

/** The `order.assigned` event of a placed order, as a courier's acceptance writes it. */
function assignedEvent(order: Order): NewEvent {
  const now = new Date(order.createdAt.getTime() + 60_000)
  const next: Order = {
    ...order, status: 'assigned', version: 2, assignedAt: now, updatedAt: now,
    courier: { id: newUuid(), name: `${pick(FIRST)} ${pick(LAST)}`, phone: `+23481${digits(8)}`, vehicle_plate: `LSR-${digits(3)}-XY`, vehicle_type: 'bike' },
    history: [...order.history, { status: 'assigned', at: now.toISOString() }],
  }
  return { id: newEventId(), type: 'order.assigned', orderId: order.id, orderVersion: 2, createdAt: now, data: { order: orderAsShown(next, DEFAULT_PLATFORM_RATES, now) } }
}

/** One placement of ORDERS shipments through the worker's statements, each timed and its WAL measured. */
async function placeOnce(lane: Lane, counted: boolean): Promise<void> {
  const { sql, scope } = lane
  const placementId = newUuid()
  const shipments = Array.from({ length: ORDERS }, variedShipment)
  await createPendingPlacement(sql, { id: placementId, businessId: scope.businessId, livemode: true, idempotencyKey: null, requestHash: 'bench', shipmentsJson: JSON.stringify(shipments) })
  const ms: Record<string, number> = {}
  const wal: Record<string, number> = {}
  const step = async <T>(db: Db, name: string, work: () => Promise<T>): Promise<T> => {
    const before = await walAt(db)
    const started = performance.now()
    const result = await work()
    ms[name] = performance.now() - started
    wal[name] = (await walAt(db)) - before
    return result
  }
  const ticks = backendTicks(lane.backendPid)
  let commitFrom = { at: 0, wal: 0 }
  const { orders, ids, events } = await sql.begin(async (tx) => {
    const opened = await step(tx, 'open', () => openPlacement(tx, placementId, scope))
    if (!opened) throw new Error(`placement ${placementId} was not found`)
    const now = opened.now
    const batch: OrderBatch = { placementId, businessId: scope.businessId, livemode: true, currency: 'NGN', history: [{ status: 'created', at: now.toISOString() }], createdAt: now }
    const orders = shipments.map((sent, position) => placedOrder(batch, position, sent))
    const events: NewEvent[] = orders.map((order) => ({ id: newEventId(), type: 'order.created', orderId: order.id, orderVersion: 1, createdAt: now, data: { order: orderAsShown(order, opened.rates, now) } }))
    const total = PRICE * orders.length
    await step(tx, 'orders', () => insertOrders(tx, batch, orders))
    await step(tx, 'outcome', () => settlePlacement(tx, placementId, 'succeeded', { kind: 'placed', currency: 'NGN', chargedTotal: total, orders: orders.map((order) => ({ orderId: order.id, price: order.price })) }))
    const ids = await step(tx, 'events', () => lane.shape.append(tx, scope, placementId, events))
    await step(tx, 'wallet', () => debitWalletIfCovered(tx, scope.businessId, total, placementId, true))
    commitFrom = { at: performance.now(), wal: await walAt(tx) }
    return { orders, ids, events }
  })
  ms.commit = performance.now() - commitFrom.at
  wal.commit = (await walAt(sql)) - commitFrom.wal
  const placeTicks = backendTicks(lane.backendPid) - ticks
  const first = lane.eventIds.length + 1
  lane.placements.push({ id: placementId, orderIds: orders.map((order) => order.id), first, last: first + orders.length - 1 })
  lane.eventIds.push(...ids)
  // The first and last event of each placement are compared with what reads return.
  for (const index of ids.length > 0 ? [0, ids.length - 1] : []) lane.written.set(ids[index]!, JSON.stringify(events[index]!.data))
  // Later, one of its orders is assigned: an append of one event, in a transaction of its own.
  const assigned = assignedEvent(orders[randomInt(orders.length)]!)
  const change = await sql.begin((tx) => step(tx, 'change', () => lane.shape.append(tx, scope, placementId, [assigned])))
  lane.eventIds.push(...change)
  if (change[0]) lane.written.set(change[0], JSON.stringify(assigned.data))
  if (!counted) return
  lane.cpuTicks += placeTicks
  const { change: changeMs, ...placeMs } = ms
  const { change: changeWal, ...placeWal } = wal
  lane.samples.push({ ms: placeMs, wal: placeWal })
  lane.changes.push({ ms: changeMs!, wal: changeWal! })
  lane.dataBytes.push(...events.slice(0, 5).map((event) => Buffer.byteLength(JSON.stringify(event.data))))
}

/** The WAL a `select 1` measures the same way: other sessions' writes, counted in every figure. */
async function walNoise(sql: Sql): Promise<number> {
  const before = await walAt(sql)
  await sql`select 1`
  return (await walAt(sql)) - before
}

interface Storage {
  events: number
  rows: number
  heap: number
  toast: number
  indexes: number
  toastChunks: number
  /** Average bytes of a row as stored in the heap (TOASTed values as their pointer), placements' rows and changes' rows apart. */
  rowBytes: { created: number; change: number }
}

/** Bytes of the shape's table (every partition's heap, TOAST with its index, and indexes) and what it holds. */
async function storageOf(lane: Lane): Promise<Storage> {
  const { sql, shape } = lane
  const [sizes] = await sql<Pick<Storage, 'heap' | 'toast' | 'indexes'>[]>`
    select coalesce(sum(pg_relation_size(c.oid)), 0)::float8 as heap,
      coalesce(sum(case when c.reltoastrelid <> 0 then pg_total_relation_size(c.reltoastrelid) else 0 end), 0)::float8 as toast,
      coalesce(sum(pg_indexes_size(c.oid)), 0)::float8 as indexes
    from pg_partition_tree(${shape.table}::regclass) t join pg_class c on c.oid = t.relid where t.isleaf`
  const toasts = await sql<{ toast: string }[]>`
    select c.reltoastrelid::regclass::text as toast from pg_partition_tree(${shape.table}::regclass) t
    join pg_class c on c.oid = t.relid where t.isleaf and c.reltoastrelid <> 0`
  const count = async (table: string) => (await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${table}`))[0]!.n
  let toastChunks = 0
  for (const { toast } of toasts) toastChunks += await count(toast)
  const [counter] = await sql<{ events: number }[]>`select coalesce(max(last_sequence), 0)::int as events from event_sequences`
  const [rowBytes] = await sql.unsafe<Storage['rowBytes'][]>(`
    select coalesce(avg(pg_column_size(t.*)) filter (where type = 'order.created'), 0)::int as created,
      coalesce(avg(pg_column_size(t.*)) filter (where type <> 'order.created'), 0)::int as change
    from ${shape.table} t`)
  return { ...sizes!, rows: await count(shape.table), toastChunks, events: counter!.events, rowBytes: rowBytes! }
}

/** Sequential scans of the shape's month partitions so far (the default partition is empty). */
async function monthSeqScans(lane: Lane): Promise<number> {
  await lane.sql`select pg_stat_force_next_flush()`
  const [row] = await lane.sql<{ scans: number }[]>`
    select coalesce(sum(seq_scan), 0)::int as scans from pg_stat_user_tables
    where schemaname = current_schema() and relname ~ ${`^${lane.shape.table}_[0-9]{4}_[0-9]{2}$`}`
  return row!.scans
}

/** The scan nodes on the shape's tables in the plans of the statements one call sends. */
async function scansOf(lane: Lane, call: () => Promise<unknown>): Promise<string[]> {
  const sent: { text: string; parameters: unknown[] }[] = []
  lane.sql.options.debug = (_connection, text, parameters) => { sent.push({ text, parameters: [...parameters] }) }
  await call()
  lane.sql.options.debug = false
  const nodes = new Set<string>()
  for (const statement of sent.filter((one) => !one.text.includes('pg_'))) {
    const plan = await lane.sql.unsafe<{ 'QUERY PLAN': string }[]>(`explain ${statement.text}`, statement.parameters as never[])
    for (const { 'QUERY PLAN': line } of plan) {
      const scan = /(\w[\w ]*Scan)( using \w+)? on (\w+)/.exec(line)
      if (scan && !scan[3]!.endsWith('_default') && (scan[3]!.startsWith(lane.shape.table) || scan[3]!.startsWith('orders'))) nodes.add(`${scan[1]}${scan[2] ?? ''} on ${scan[3]}`)
    }
  }
  return [...nodes]
}

type Timings = Record<string, number[]>

/** What the API or the sender sends of an event: the work a read ends in. */
const body = (event: StoredEvent) => JSON.stringify(toEventResource(event))

/** Times each read on each shape in turn, checking every answer. */
async function measureReads(lanes: Lane[]): Promise<Record<string, Timings>> {
  const timings: Record<string, Timings> = Object.fromEntries(lanes.map((lane) => [lane.shape.name, { backfill: [], findById: [], relayRange: [] }]))
  const timed = async (lane: Lane, name: string, call: () => Promise<void>) => {
    const started = performance.now()
    await call()
    timings[lane.shape.name]![name]!.push(performance.now() - started)
  }
  for (let i = 0; i < READS; i++) {
    for (const lane of lanes) {
      const reads = lane.shape.reads!
      const events = lane.eventIds.length
      const after = randomInt(events - PAGE)
      let page: StoredEvent[] = []
      await timed(lane, 'backfill', async () => {
        page = await reads.backfill(lane.sql, lane.scope, after, PAGE)
        page.map(body)
      })
      if (page.length !== PAGE || page.some((event, index) => event.sequence !== after + 1 + index)) throw new Error(`${lane.shape.name}: after=${after} is not a full gapless page`)
      const id = pick(lane.eventIds)
      let found: StoredEvent | null = null
      await timed(lane, 'findById', async () => {
        found = await reads.findById(lane.sql, id)
        if (found) body(found)
      })
      checkFound(lane, id, found)
      const placement = pick(lane.placements)
      await timed(lane, 'relayRange', async () => {
        const claimed = await reads.relayRange(lane.sql, lane.scope, placement.first, placement.last)
        if (claimed.length !== placement.orderIds.length) throw new Error(`${lane.shape.name}: the relay found ${claimed.length} events of ${placement.orderIds.length}`)
      })
    }
  }
  return timings
}

/** An event read by id is the one written, byte for byte where a sample was kept. */
function checkFound(lane: Lane, id: string, found: StoredEvent | null): void {
  if (!found || found.id !== id) throw new Error(`${lane.shape.name}: ${id} was not found`)
  const written = lane.written.get(id)
  if (written !== undefined && JSON.stringify(found.data) !== written) throw new Error(`${lane.shape.name}: ${id} does not read as written`)
}

interface Erasures { oneOrder: { ms: number[]; wal: number[] }; placement: { ms: number[]; wal: number[] } }

/** Erases single orders (a person's request) and whole placements (the retention sweep), timed with their WAL. */
async function measureErasures(lanes: Lane[]): Promise<Record<string, Erasures>> {
  const nulls = Object.fromEntries(PERSONAL_FIELDS.map((field) => [field, null]))
  const result: Record<string, Erasures> = Object.fromEntries(lanes.map((lane) => [lane.shape.name, { oneOrder: { ms: [], wal: [] }, placement: { ms: [], wal: [] } }]))
  const erase = async (lane: Lane, kind: keyof Erasures, orderIds: string[], scope: { placementIds: string[] } | { orderIds: string[] }) => {
    const reads = lane.shape.reads!
    const before = await walAt(lane.sql)
    const started = performance.now()
    await lane.sql.begin(async (tx) => {
      await eraseOrders(tx, scope, PERSONAL_FIELDS)
      await reads.eraseEvents(tx, orderIds, nulls)
    })
    result[lane.shape.name]![kind].ms.push(performance.now() - started)
    result[lane.shape.name]![kind].wal.push((await walAt(lane.sql)) - before)
  }
  for (let i = 0; i < ERASURES; i++) {
    for (const lane of lanes) {
      // Placements from the front are erased whole; single orders come from the back half.
      const placement = lane.placements[lane.placements.length - 1 - i]!
      const position = randomInt(placement.orderIds.length)
      await erase(lane, 'oneOrder', [placement.orderIds[position]!], { orderIds: [placement.orderIds[position]!] })
      const erased = await lane.shape.reads!.findById(lane.sql, lane.eventIds[placement.first - 1 + position]!)
      if (erased?.data.order.recipient_name !== null) throw new Error(`${lane.shape.name}: an erased order's event still names its recipient`)
      if (i % 4 !== 0) continue
      const whole = lane.placements[i / 4]!
      await erase(lane, 'placement', whole.orderIds, { placementIds: [whole.id] })
    }
  }
  return result
}

const median = (values: number[]) => percentile(values, 50)
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0
}
const round = (value: number, places = 2) => Math.round(value * 10 ** places) / 10 ** places

async function main(): Promise<void> {
  const run = randomBytes(3).toString('hex')
  const lanes: Lane[] = []
  try {
    for (const [index, shape] of SHAPES.entries()) lanes.push(await openLane(shape, run, index))
    const noise: number[] = []
    for (let turn = 0; turn < WARMUP + PLACEMENTS; turn++) {
      // Each turn starts with the next shape, so none always follows the same one.
      for (let k = 0; k < lanes.length; k++) await placeOnce(lanes[(turn + k) % lanes.length]!, turn >= WARMUP)
      noise.push(await walNoise(lanes[0]!.sql))
      if ((turn + 1) % 50 === 0) console.log(`  ${turn + 1} placements per shape`)
    }
    const storage: Record<string, Storage> = {}
    for (const lane of lanes) storage[lane.shape.name] = await storageOf(lane)
    const readers = lanes.filter((lane) => lane.shape.reads !== null)
    const scansBefore = await Promise.all(readers.map(monthSeqScans))
    const reads = await measureReads(readers)
    const seqScans = Object.fromEntries(await Promise.all(readers.map(async (lane, index) => [lane.shape.name, (await monthSeqScans(lane)) - scansBefore[index]!])))
    const plans: Record<string, Record<string, string[]>> = {}
    for (const lane of readers) {
      const reads = lane.shape.reads as ShapeReads
      plans[lane.shape.name] = {
        backfill: await scansOf(lane, () => reads.backfill(lane.sql, lane.scope, Math.floor(lane.eventIds.length / 2), PAGE)),
        findById: await scansOf(lane, () => reads.findById(lane.sql, lane.eventIds[0]!)),
      }
    }
    const erasures = await measureErasures(readers)
    const result = summarise(lanes, storage, reads, seqScans, plans, erasures, noise)
    const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../test/bench/results')
    mkdirSync(dir, { recursive: true })
    const file = path.join(dir, `event-shape-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
    writeFileSync(file, JSON.stringify(result, null, 2))
    console.log(report(result))
    console.log(`written to ${file}`)
  } finally {
    for (const lane of lanes) {
      if (!process.env.EVENT_SHAPE_KEEP) await lane.sql`drop schema if exists ${lane.sql(lane.schema)} cascade`
      await lane.sql.end()
    }
  }
}

function summarise(lanes: Lane[], storage: Record<string, Storage>, reads: Record<string, Timings>, seqScans: Record<string, number>, plans: Record<string, Record<string, string[]>>, erasures: Record<string, Erasures>, noise: number[]) {
  const writes = lanes.map((lane) => {
    const stepMs = Object.fromEntries(STEPS.map((step) => [step, round(median(lane.samples.map((sample) => sample.ms[step] ?? 0)))]))
    const stepWal = Object.fromEntries(STEPS.map((step) => [step, median(lane.samples.map((sample) => sample.wal[step] ?? 0))]))
    const txMs = lane.samples.map((sample) => STEPS.reduce((sum, step) => sum + (sample.ms[step] ?? 0), 0))
    const txWal = lane.samples.map((sample) => STEPS.reduce((sum, step) => sum + (sample.wal[step] ?? 0), 0))
    const eventsShare = lane.samples.map((sample, index) => sample.ms.events! / txMs[index]!)
    const walShare = lane.samples.map((sample, index) => sample.wal.events! / txWal[index]!)
    const held = storage[lane.shape.name]!
    const perEvent = (bytes: number) => (held.events > 0 && lane.shape.reads ? round(bytes / held.events, 0) : 0)
    return {
      shape: lane.shape.name,
      placements: lane.samples.length,
      ordersPerPlacement: ORDERS,
      eventDataBytes: round(median(lane.dataBytes), 0),
      stepMs,
      stepWal,
      eventsWalMin: Math.min(...lane.samples.map((sample) => sample.wal.events!)),
      change: { ms: round(median(lane.changes.map((change) => change.ms))), wal: median(lane.changes.map((change) => change.wal)) },
      txMs: round(median(txMs)),
      txMsP90: round(percentile(txMs, 90)),
      txWal: median(txWal),
      eventsShareOfTime: round(median(eventsShare), 3),
      eventsShareOfWal: round(median(walShare), 3),
      postgresCpuMsPerPlacement: round((lane.cpuTicks * 10) / lane.samples.length),
      storage: held,
      bytesPerEvent: { heap: perEvent(held.heap), toast: perEvent(held.toast), indexes: perEvent(held.indexes), total: perEvent(held.heap + held.toast + held.indexes) },
    }
  })
  const readFigures = Object.entries(reads).map(([shape, timings]) => ({
    shape,
    timings: Object.fromEntries(Object.entries(timings).map(([name, times]) => [name, { p50: round(median(times)), p99: round(percentile(times, 99)) }])),
    monthSeqScans: seqScans[shape],
    plans: plans[shape],
    erase: Object.fromEntries(Object.entries(erasures[shape]!).map(([kind, figures]) => [kind, { ms: round(median(figures.ms)), wal: median(figures.wal), calls: figures.ms.length }])),
  }))
  return { at: new Date().toISOString(), placements: PLACEMENTS, orders: ORDERS, reads: READS, walNoise: { median: median(noise), p90: percentile(noise, 90) }, writes, readFigures }
}

type Result = ReturnType<typeof summarise>

const kb = (bytes: number) => `${round(bytes / 1024, 1)} KB`

function report(result: Result): string {
  const lines = [
    `event shape: ${result.placements} placements of ${result.orders} orders per shape (medians), WAL noise of a select 1: median ${result.walNoise.median} B, p90 ${result.walNoise.p90} B`,
    '| shape | events ms | tx ms | events share of time | events WAL | tx WAL | events share of WAL | Postgres CPU ms / placement | heap + TOAST + index bytes / event |',
    '|---|---|---|---|---|---|---|---|---|',
    ...result.writes.map((w) => `| ${w.shape} | ${w.stepMs.events} | ${w.txMs} | ${w.eventsShareOfTime} | ${kb(w.stepWal.events!)} | ${kb(w.txWal)} | ${w.eventsShareOfWal} | ${w.postgresCpuMsPerPlacement} | ${w.bytesPerEvent.heap} + ${w.bytesPerEvent.toast} + ${w.bytesPerEvent.indexes} = ${w.bytesPerEvent.total} |`),
    '',
    'data of an order.created event (bytes of JSON): ' + result.writes.map((w) => `${w.shape}: ${w.eventDataBytes}`).join('; '),
    'one later order change (an append of one order.assigned, own transaction), ms / WAL bytes: ' + result.writes.map((w) => `${w.shape}: ${w.change.ms} / ${w.change.wal}`).join('; '),
    'steps (ms): ' + result.writes.map((w) => `${w.shape}: ${STEPS.map((step) => `${step} ${w.stepMs[step]}`).join(', ')}`).join('; '),
    'steps (WAL bytes): ' + result.writes.map((w) => `${w.shape}: ${STEPS.map((step) => `${step} ${w.stepWal[step]}`).join(', ')}`).join('; '),
    'storage: ' + result.writes.map((w) => `${w.shape}: ${w.storage.events} events, ${w.storage.rows} rows, ${w.storage.toastChunks} TOAST chunks, row bytes (TOASTed values compressed) ${w.storage.rowBytes.created} (a placement) and ${w.storage.rowBytes.change} (a change)`).join('; '),
    '',
    '| shape | backfill 100 p50 / p99 ms | by id p50 / p99 ms | relay range p50 ms | seq scans of months | erase one order ms / WAL | erase a placement ms / WAL |',
    '|---|---|---|---|---|---|---|',
    ...result.readFigures.map((r) => {
      const timing = (name: string) => `${r.timings[name]!.p50} / ${r.timings[name]!.p99}`
      return `| ${r.shape} | ${timing('backfill')} | ${timing('findById')} | ${r.timings.relayRange!.p50} | ${r.monthSeqScans} | ${r.erase.oneOrder!.ms} / ${kb(r.erase.oneOrder!.wal)} | ${r.erase.placement!.ms} / ${kb(r.erase.placement!.wal)} |`
    }),
    '',
    ...result.readFigures.map((r) => `plans, ${r.shape}: backfill ${r.plans!.backfill!.join(', ')}; by id ${r.plans!.findById!.join(', ')}`),
  ]
  return lines.join('\n')
}

await main()
