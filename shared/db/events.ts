import type { OrderEventType } from '../courier.js'
import type { OrderScope } from './orders.js'
import { literalList, type Db, type Tx } from './sql.js'

/** An event row: `data` is `{ order: <the order resource after the change> }`. */
export interface StoredEvent {
  id: string
  businessId: string
  livemode: boolean
  sequence: number
  type: OrderEventType
  orderId: string
  orderVersion: number
  data: { order: Record<string, unknown> }
  createdAt: Date
  /** The W3C traceparent of the transaction that wrote it, if it was traced. */
  traceparent: string | null
}

export type NewEvent = Pick<StoredEvent, 'id' | 'type' | 'orderId' | 'orderVersion' | 'data' | 'createdAt'>

const COLUMNS = 'id, business_id, livemode, sequence, type, order_id, order_version, data, created_at, traceparent'

/**
 * Appends events in the caller's transaction, numbered in the order given. The counter row of
 * (business, mode) is bumped by their number in the same statement and stays locked until the
 * commit, so two transactions never take the same numbers and a rolled-back one leaves no gap.
 * `traceparent` names the trace that wrote them, for the webhook sender to continue. The same
 * statement puts them on the relay's work list (`event_outbox`), as one row naming the append's
 * range of sequence numbers. The data is stored as json, the text as written (migration 00013).
 */
export async function appendEvents(tx: Tx, scope: OrderScope, events: NewEvent[], traceparent: string | null): Promise<void> {
  if (events.length === 0) return
  const rows = events.map((event) => ({
    id: event.id,
    type: event.type,
    order_id: event.orderId,
    order_version: event.orderVersion,
    data: event.data,
    created_at: event.createdAt,
  }))
  await tx`
    with counter as (
      insert into event_sequences (business_id, livemode, last_sequence) values (${scope.businessId}, ${scope.livemode}, ${events.length})
      on conflict (business_id, livemode) do update set last_sequence = event_sequences.last_sequence + excluded.last_sequence
      returning last_sequence)
    , appended as (
      insert into events (id, business_id, livemode, sequence, type, order_id, order_version, data, created_at, traceparent)
      select e.id, ${scope.businessId}, ${scope.livemode}, counter.last_sequence - ${events.length} + e.n, e.type, e.order_id, e.order_version, e.data, e.created_at, ${traceparent}
      from counter, rows from (json_to_recordset(${JSON.stringify(rows)}::text::json)
        as (id text, type text, order_id text, order_version integer, data json, created_at timestamptz))
        with ordinality as e(id, type, order_id, order_version, data, created_at, n)
      returning sequence)
    insert into event_outbox (business_id, livemode, first_sequence, last_sequence)
    select ${scope.businessId}, ${scope.livemode}, min(sequence), max(sequence) from appended`
}

export interface EventFilter {
  after: number
  types: OrderEventType[] | null
  limit: number
}

/** The types every delivered order has an event of; the others are indexed by type (migration 00029, whose predicate names these in this order). */
const COMMON_TYPES: readonly OrderEventType[] = ['order.created', 'order.assigned', 'order.picked_up', 'order.delivered']

/**
 * A business's events after a sequence number, in sequence order: the backfill of a receiver that
 * was down. Asked for uncommon types only, it says so in the index's own words, so they are read
 * through that index instead of found among all of the business's events.
 */
export async function listEvents(db: Db, scope: OrderScope, filter: EventFilter): Promise<StoredEvent[]> {
  const uncommonOnly = filter.types !== null && filter.types.every((type) => !COMMON_TYPES.includes(type))
  return db<StoredEvent[]>`
    select ${db.unsafe(COLUMNS)} from events
    where business_id = ${scope.businessId} and livemode = ${scope.livemode} and sequence > ${filter.after}
      ${filter.types ? db`and type = any(${filter.types}::text[])` : db``}
      ${uncommonOnly ? db`and type not in (${literalList(db, COMMON_TYPES)})` : db``}
    order by sequence limit ${filter.limit}`
}

export async function findEvent(db: Db, id: string, scope: OrderScope): Promise<StoredEvent | null> {
  const [row] = await db<StoredEvent[]>`
    select ${db.unsafe(COLUMNS)} from events where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode}`
  return row ?? null
}

/** An order's events, oldest first. */
export async function findOrderEvents(db: Db, orderId: string): Promise<StoredEvent[]> {
  return db<StoredEvent[]>`select ${db.unsafe(COLUMNS)} from events where order_id = ${orderId} order by sequence`
}

/** Any event by id, whoever owns it, through each month's primary-key index (the sender reads events with their deliveries instead: `findDeliveriesToAttempt`). */
export async function findEventById(db: Db, id: string): Promise<StoredEvent | null> {
  const [row] = await db<StoredEvent[]>`select ${db.unsafe(COLUMNS)} from events where id = ${id}`
  return row ?? null
}
