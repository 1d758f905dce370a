import { appendEvents, findEventById, listEvents, type NewEvent, type StoredEvent } from '../../shared/db/events.js'
import type { Order, OrderScope } from '../../shared/db/orders.js'
import { DEFAULT_PLATFORM_RATES } from '../../shared/db/platform-rates.js'
import type { Db, Sql, Tx } from '../../shared/db/sql.js'
import { monthPartition } from '../../shared/orders/history.js'
import { orderAsShown } from '../../shared/orders/resource.js'

/*
 * The event data shapes compared by event-shape.ts (docs/performance.md "Event data shape:
 * proposal"). Each is the write of a placement's events and the reads the contract needs of them:
 * the backfill (`GET /v2/business/events?after=`), one event by id (the webhook sender's read,
 * `GET /v2/business/events/{id}`, redeliver), the relay's expansion of one outbox row into event
 * ids and types, and what erasure must add for the shape. `today` is the project's own code; the
 * others exist only here, in schemas of their own, until the lead decides.
 */

/** One shape's reads. */
export interface ShapeReads {
  /** Up to `limit` events after `after`, in sequence order, as the API shows them. */
  backfill: (db: Sql, scope: OrderScope, after: number, limit: number) => Promise<StoredEvent[]>
  /** Any event by id (the webhook sender's read). */
  findById: (db: Sql, id: string) => Promise<StoredEvent | null>
  /** One append's events (an outbox row's range) as the relay takes them: ids and types. */
  relayRange: (db: Sql, scope: OrderScope, first: number, last: number) => Promise<{ id: string; type: string }[]>
  /** What erasing these orders needs beyond the project's `eraseOrders`, in its transaction. */
  eraseEvents: (tx: Tx, orderIds: string[], nulls: Record<string, null>) => Promise<void>
}

export interface EventShape {
  name: string
  /** Statements run after the project's migrations, in the shape's own schema. */
  ddl: string[]
  /** The (partitioned) table holding the events: its partitions, TOAST and indexes are the storage figures. */
  table: string
  /** Appends a placement's events in the caller's transaction; returns the ids they are read by. */
  append: (tx: Tx, scope: OrderScope, placementId: string, events: NewEvent[]) => Promise<string[]>
  /** Null for the reference that writes no events (it breaks the contract: a floor, not a proposal). */
  reads: ShapeReads | null
}

/** The relay's lookup of one append by its range, as `relayEvents` does it. */
async function relayRangeOfRows(db: Sql, scope: OrderScope, first: number, last: number): Promise<{ id: string; type: string }[]> {
  return db<{ id: string; type: string }[]>`
    select id, type from events
    where business_id = ${scope.businessId} and livemode = ${scope.livemode} and sequence between ${first} and ${last}`
}

const eraseNothing = async () => {}

/** Today: one row per event, each holding its order as shown (json), three indexes. */
export const TODAY: EventShape = {
  name: 'today: a row per event',
  ddl: [],
  table: 'events',
  append: async (tx, scope, _placementId, events) => {
    await appendEvents(tx, scope, events, null)
    return events.map((event) => event.id)
  },
  reads: {
    backfill: (db, scope, after, limit) => listEvents(db, scope, { after, types: null, limit }),
    findById: findEventById,
    relayRange: relayRangeOfRows,
    // The project's eraseOrders edits the events rows itself.
    eraseEvents: eraseNothing,
  },
}

/** The floor: the same transaction with no events at all. */
export const NO_EVENTS: EventShape = { name: 'no events (floor)', ddl: [], table: 'events', append: async () => [], reads: null }

// ---------------------------------------------------------------------------------------------
// Thin: the `order.created` rows keep every column but the order; it is rebuilt from the order
// row at read time (version 1 is what the row was when placed: the shipment, price and ids never
// change after placement, and erasure nulls them in the row as it would in the event).

/** What the created event stands in for: `{"order": {}}`, written by the project's own append. */
const THIN = { order: {} }

// The order columns a rebuild reads, as shared/db/orders.ts reads them.
const ORDER_READ = `id, placement_id, business_id, livemode, position, status, version, price, currency, pricing_model, vehicle_type,
  option_id, option_label, delivery_mode, distance_km::float8 as distance_km, from_zone_name, to_zone_name, shipment, courier, courier_id,
  pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, delivery_pin, pin_attempts, pin_verified_at, delivered_lat, delivered_lng, photo_key,
  photo_url, tracking_url, tracking_token, history, assigned_at, refunded_amount, created_at, updated_at`

/** The order as it stood at version 1, from its row now. */
function placedVersion(order: Order): Order {
  const placed = order.history[0]
  return {
    ...order, status: 'created', version: 1, courier: null, courierId: null, assignedAt: null, refundedAmount: 0,
    pinVerifiedAt: null, deliveredLat: null, deliveredLng: null, photoKey: null, photoUrl: null,
    // The entry rebuilt in the order it was written (jsonb keeps its keys sorted).
    history: placed ? [{ status: placed.status, at: placed.at }] : [], updatedAt: order.createdAt,
  }
}

/** Fills in the `order.created` events' orders from the orders table (one read for the page). */
async function rebuildCreated(db: Db, events: StoredEvent[]): Promise<StoredEvent[]> {
  const thin = events.filter((event) => event.type === 'order.created')
  if (thin.length === 0) return events
  const orders = await db<Order[]>`select ${db.unsafe(ORDER_READ)} from orders where id = any(${thin.map((event) => event.orderId)})`
  const byId = new Map(orders.map((order) => [order.id, order]))
  return events.map((event) => {
    const order = event.type === 'order.created' ? byId.get(event.orderId) : undefined
    // The created event's cancellation block does not depend on the rates (free, no window yet).
    return order ? { ...event, data: { order: orderAsShown(placedVersion(order), DEFAULT_PLATFORM_RATES, order.createdAt) } } : event
  })
}

export const THIN_CREATED: EventShape = {
  name: 'thin: created events without the order',
  ddl: [],
  table: 'events',
  append: async (tx, scope, _placementId, events) => {
    await appendEvents(tx, scope, events.map((event) => (event.type === 'order.created' ? { ...event, data: THIN } : event)), null)
    return events.map((event) => event.id)
  },
  reads: {
    backfill: async (db, scope, after, limit) => rebuildCreated(db, await listEvents(db, scope, { after, types: null, limit })),
    findById: async (db, id) => {
      const event = await findEventById(db, id)
      return event && (await rebuildCreated(db, [event]))[0]!
    },
    relayRange: relayRangeOfRows,
    eraseEvents: eraseNothing,
  },
}

// ---------------------------------------------------------------------------------------------
// Batch: one row per append. The row holds the append's range of sequence numbers [first, last],
// its events' orders as a json[] (TOASTed: compressed, out of line) and their order ids and
// versions; the events are its elements. An event's id is the row's key (`evt_` and 16 Crockford
// characters, 80 random bits) and its position in four more (20 bits), so it still matches
// `evt_` and 20 characters and is found through the row's primary key, with no index entry of
// its own. Backfill is a range scan of (business, mode, last_sequence).

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
const KEY_LENGTH = 20
const POSITION_SHIFTS = [15, 10, 5, 0]

/** The id of the event at `position` (0-based) of the batch `key`. */
export function batchEventId(key: string, position: number): string {
  return key + POSITION_SHIFTS.map((shift) => CROCKFORD[(position >> shift) & 31]).join('')
}

/** The batch key and position an event id names. */
function batchPosition(id: string): { key: string; position: number } {
  let position = 0
  for (const char of id.slice(KEY_LENGTH)) position = position * 32 + CROCKFORD.indexOf(char)
  return { key: id.slice(0, KEY_LENGTH), position }
}

/** The same as batchEventId, in SQL, for the relay's one statement. */
const positionSql = (n: string) => POSITION_SHIFTS.map((shift) => `substr('${CROCKFORD}', ((${n} >> ${shift}) & 31)::int + 1, 1)`).join(' || ')

function batchDdl(compression: 'lz4' | 'pglz'): string[] {
  const month = monthPartition('events', new Date())
  return [
    `create table event_batches (
      id              text not null,
      business_id     uuid not null,
      livemode        boolean not null,
      first_sequence  bigint not null check (first_sequence > 0),
      last_sequence   bigint not null,
      type            text not null,
      placement_id    uuid not null,
      order_ids       text[] not null,
      order_versions  integer[] not null,
      data            json[] not null,
      created_at      timestamptz not null,
      traceparent     text,
      check (last_sequence >= first_sequence),
      check (cardinality(order_ids) = last_sequence - first_sequence + 1 and cardinality(data) = cardinality(order_ids))
    ) partition by range (created_at)`,
    `alter table event_batches alter column data set compression ${compression}`,
    `create table ${month.name.replace('events', 'event_batches')} partition of event_batches
      for values from ('${month.from.toISOString()}') to ('${month.to.toISOString()}')`,
    'create table event_batches_default partition of event_batches default',
    'alter table event_batches add primary key (id, created_at)',
    'alter table event_batches add unique (business_id, livemode, last_sequence, created_at)',
    'create index event_batches_by_placement on event_batches (placement_id)',
  ]
}

/** An event as a batch's element reads: its batch's key and its position there in place of its id. */
type BatchEventRow = Omit<StoredEvent, 'id'> & { key: string; position: number }

function fromBatchRow({ key, position, ...event }: BatchEventRow): StoredEvent {
  return { id: batchEventId(key, position), ...event }
}

async function appendBatch(tx: Tx, scope: OrderScope, placementId: string, events: NewEvent[]): Promise<string[]> {
  const [first] = events
  if (!first) return []
  if (events.some((event) => event.type !== first.type)) throw new Error('a batch holds events of one type')
  const key = first.id.slice(0, KEY_LENGTH)
  // The counter and the outbox row exactly as appendEvents takes and writes them: only the events' row differs.
  await tx`
    with counter as (
      insert into event_sequences (business_id, livemode, last_sequence) values (${scope.businessId}, ${scope.livemode}, ${events.length})
      on conflict (business_id, livemode) do update set last_sequence = event_sequences.last_sequence + excluded.last_sequence
      returning last_sequence)
    , appended as (
      insert into event_batches (id, business_id, livemode, first_sequence, last_sequence, type, placement_id, order_ids, order_versions, data, created_at)
      select ${key}, ${scope.businessId}, ${scope.livemode}, counter.last_sequence - ${events.length} + 1, counter.last_sequence, ${first.type},
        ${placementId}, ${events.map((event) => event.orderId)}::text[], ${events.map((event) => event.orderVersion)}::int[],
        array(select json_array_elements(${JSON.stringify(events.map((event) => event.data))}::text::json)), ${first.createdAt}
      from counter
      returning first_sequence, last_sequence)
    insert into event_outbox (business_id, livemode, first_sequence, last_sequence)
    select ${scope.businessId}, ${scope.livemode}, first_sequence, last_sequence from appended`
  return events.map((_, position) => batchEventId(key, position))
}

const batchReads: ShapeReads = {
  // The batches that hold the page: their heads in index order (the orders stay TOASTed until
  // unnested), cut where the events before them already fill it; then their events.
  backfill: async (db, scope, after, limit) => {
    const rows = await db<BatchEventRow[]>`
      with heads as (
        select id, first_sequence, last_sequence, type, order_ids, order_versions, data, created_at, traceparent,
          last_sequence - greatest(first_sequence, ${after + 1}) + 1 as events
        from event_batches
        where business_id = ${scope.businessId} and livemode = ${scope.livemode} and last_sequence > ${after}
        order by last_sequence limit ${limit}
      ), chosen as (
        select * from (select h.*, sum(events) over (order by last_sequence) - events as before from heads h) c where before < ${limit}
      )
      select c.id as key, e.n - 1 as position, ${scope.businessId}::uuid as business_id, ${scope.livemode} as livemode,
        c.first_sequence + e.n - 1 as sequence, c.type, e.order_id, c.order_versions[e.n] as order_version, e.data, c.created_at, c.traceparent
      from chosen c cross join lateral unnest(c.data, c.order_ids) with ordinality as e(data, order_id, n)
      where c.first_sequence + e.n - 1 > ${after}
      order by sequence limit ${limit}`
    return rows.map(fromBatchRow)
  },
  findById: async (db, id) => {
    const { key, position } = batchPosition(id)
    const [row] = await db<BatchEventRow[]>`
      select id as key, ${position}::int as position, business_id, livemode, first_sequence + ${position} as sequence, type,
        order_ids[${position + 1}] as order_id, order_versions[${position + 1}] as order_version, data[${position + 1}] as data, created_at, traceparent
      from event_batches where id = ${key} and ${position} <= last_sequence - first_sequence`
    return row ? fromBatchRow(row) : null
  },
  relayRange: (db, scope, _first, last) => db<{ id: string; type: string }[]>`
    select b.id || ${db.unsafe(positionSql('n'))} as id, b.type
    from event_batches b cross join generate_series(0, b.last_sequence - b.first_sequence) n
    where b.business_id = ${scope.businessId} and b.livemode = ${scope.livemode} and b.last_sequence = ${last}`,
  // The erased orders' elements get the same nulls eraseOrders gives an events row; the batch's
  // whole array is written again (it is one value).
  eraseEvents: async (tx, orderIds, nulls) => {
    await tx`
      update event_batches b set data = array(
        select case when e.order_id = any(${orderIds}::text[])
          then json_build_object('order', (e.data::jsonb -> 'order') || ${JSON.stringify(nulls)}::text::jsonb
            || '{"courier": null, "delivery_pin": null}'::jsonb)::json
          else e.data end
        from unnest(b.data, b.order_ids) with ordinality as e(data, order_id, n) order by e.n)
      where b.placement_id = any(array(select placement_id from orders where id = any(${orderIds}::text[])))
        and b.order_ids && ${orderIds}::text[]`
  },
}

export const BATCH_LZ4: EventShape = { name: 'batch: a row per append (lz4)', ddl: batchDdl('lz4'), table: 'event_batches', append: appendBatch, reads: batchReads }
export const BATCH_PGLZ: EventShape = { name: 'batch: a row per append (pglz)', ddl: batchDdl('pglz'), table: 'event_batches', append: appendBatch, reads: batchReads }
