import { OPEN_STATUSES, type Courier, type DeliveryMode, type HistoryEntry, type OrderStatus, type VehicleType } from '../courier.js'
import { literalList, type Db, type Tx } from './sql.js'

/** A shipment as the order keeps it: the fields sent, defaults resolved; personal fields go after the retention period. */
export type StoredShipment = Record<string, unknown>

/** An order row. Money in kobo; times to the millisecond. */
export interface Order {
  id: string
  placementId: string
  businessId: string
  livemode: boolean
  position: number
  status: OrderStatus
  version: number
  price: number
  currency: string
  pricingModel: 'rate_card' | 'distance'
  vehicleType: VehicleType
  optionId: string | null
  optionLabel: string | null
  deliveryMode: DeliveryMode
  distanceKm: number
  fromZoneName: string | null
  toZoneName: string | null
  shipment: StoredShipment
  courier: Courier | null
  /** The registered courier holding the order (null: none, or one typed in by an operator). */
  courierId: string | null
  /** Where placement located the ends; null once erased (and for orders made before dispatch). */
  pickupLat: number | null
  pickupLng: number | null
  dropoffLat: number | null
  dropoffLng: number | null
  /** The 4-digit PIN the recipient gives the courier, when the shipment asked for one; never shown to couriers. */
  deliveryPin: string | null
  /** Wrong PINs given so far: the fifth locks the courier's delivery. */
  pinAttempts: number
  pinVerifiedAt: Date | null
  /** Where the courier was when they delivered (their last fix), if known. */
  deliveredLat: number | null
  deliveredLng: number | null
  /** The delivery's photo in the photo store, and the link the business reads it by (null: none, or erased). */
  photoKey: string | null
  photoUrl: string | null
  /** The recipient's tracking page, and the token it is found by (null once erased). */
  trackingUrl: string | null
  trackingToken: string | null
  history: HistoryEntry[]
  /** The latest assignment: a business's free cancellation window runs from it. */
  assignedAt: Date | null
  refundedAmount: number
  createdAt: Date
  updatedAt: Date
}

/** An order to insert: the placement's transaction has priced it and fixed its times. */
export type NewOrder = Omit<Order, 'status' | 'version' | 'courier' | 'courierId' | 'assignedAt' | 'refundedAmount' | 'pinAttempts' | 'pinVerifiedAt' | 'deliveredLat' | 'deliveredLng' | 'photoKey' | 'photoUrl'>

/**
 * What the orders of one insert share: their placement, business and mode, currency, first
 * history entry and creation time (also their update time). Sent once per statement, not once
 * per row, which makes a 100-order insert smaller and cheaper for Postgres (docs/performance.md).
 */
export type OrderBatch = Pick<NewOrder, 'placementId' | 'businessId' | 'livemode' | 'currency' | 'history' | 'createdAt'>

/** What each order of a batch has of its own. */
export type OrderLine = Omit<NewOrder, keyof OrderBatch | 'updatedAt'>

/**
 * What an `Order` is read from, here and in the repositories that read whole orders by another key.
 * distance_km is numeric, which postgres.js reads as text; the cast makes it a number.
 */
export const ORDER_COLUMNS = `id, placement_id, business_id, livemode, position, status, version, price, currency, pricing_model,
  vehicle_type, option_id, option_label, delivery_mode, distance_km::float8 as distance_km, from_zone_name, to_zone_name,
  shipment, courier, courier_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, delivery_pin, pin_attempts, pin_verified_at,
  delivered_lat, delivered_lng, photo_key, photo_url, tracking_url, tracking_token, history, assigned_at, refunded_amount, created_at, updated_at`

/** Inserts orders of one placement in one statement, whatever their number. */
export async function insertOrders(tx: Tx, batch: OrderBatch, orders: OrderLine[]): Promise<void> {
  const rows = orders.map((order) => ({
    id: order.id,
    position: order.position,
    price: order.price,
    pricing_model: order.pricingModel,
    vehicle_type: order.vehicleType,
    option_id: order.optionId,
    option_label: order.optionLabel,
    delivery_mode: order.deliveryMode,
    distance_km: order.distanceKm,
    from_zone_name: order.fromZoneName,
    to_zone_name: order.toZoneName,
    shipment: order.shipment,
    pickup_lat: order.pickupLat,
    pickup_lng: order.pickupLng,
    dropoff_lat: order.dropoffLat,
    dropoff_lng: order.dropoffLng,
    delivery_pin: order.deliveryPin,
    tracking_url: order.trackingUrl,
    tracking_token: order.trackingToken,
  }))
  // One JSON text parameter, cast once: a parameter typed jsonb would be encoded twice.
  await tx`
    insert into orders (id, placement_id, business_id, livemode, position, price, currency, pricing_model, vehicle_type, option_id,
      option_label, delivery_mode, distance_km, from_zone_name, to_zone_name, shipment, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng,
      delivery_pin, tracking_url, tracking_token, history, created_at, updated_at)
    select r.id, ${batch.placementId}, ${batch.businessId}, ${batch.livemode}, r.position, r.price, ${batch.currency}, r.pricing_model,
      r.vehicle_type, r.option_id, r.option_label, r.delivery_mode, r.distance_km, r.from_zone_name, r.to_zone_name, r.shipment,
      r.pickup_lat, r.pickup_lng, r.dropoff_lat, r.dropoff_lng, r.delivery_pin, r.tracking_url, r.tracking_token, ${JSON.stringify(batch.history)}::text::jsonb, ${batch.createdAt}, ${batch.createdAt}
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as r(id text, position integer, price bigint, pricing_model text,
      vehicle_type text, option_id text, option_label text, delivery_mode text, distance_km numeric, from_zone_name text,
      to_zone_name text, shipment jsonb, pickup_lat float8, pickup_lng float8, dropoff_lat float8, dropoff_lng float8, delivery_pin text, tracking_url text, tracking_token text)`
}

/** Who may see an order: one business in one mode, or, for the operator, anyone (null). */
export interface OrderScope {
  businessId: string
  livemode: boolean
}

export async function findOrder(db: Db, id: string, scope: OrderScope): Promise<Order | null> {
  const [row] = await db<Order[]>`
    select ${db.unsafe(ORDER_COLUMNS)} from orders where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode}`
  return row ?? null
}

/** Who may change an order: its business in its mode, the courier holding it, or the operator (null). */
export type OrderAccess = OrderScope | { courierId: string } | null

/** Locks one order until the transaction ends: every change of an order starts here. */
export async function lockOrder(tx: Tx, id: string, access: OrderAccess): Promise<Order | null> {
  const [row] = access === null
    ? await tx<Order[]>`select ${tx.unsafe(ORDER_COLUMNS)} from orders where id = ${id} for update`
    : 'courierId' in access
      ? await tx<Order[]>`select ${tx.unsafe(ORDER_COLUMNS)} from orders where id = ${id} and courier_id = ${access.courierId} for update`
      : await tx<Order[]>`
          select ${tx.unsafe(ORDER_COLUMNS)} from orders where id = ${id} and business_id = ${access.businessId} and livemode = ${access.livemode} for update`
  return row ?? null
}

/** Writes what a change moves; the caller holds the row lock. */
export async function updateOrder(tx: Tx, order: Order): Promise<void> {
  await tx`
    update orders set status = ${order.status}, version = ${order.version},
      courier = ${order.courier === null ? null : JSON.stringify(order.courier)}::text::jsonb, courier_id = ${order.courierId},
      history = ${JSON.stringify(order.history)}::text::jsonb, assigned_at = ${order.assignedAt},
      refunded_amount = ${order.refundedAmount}, pin_verified_at = ${order.pinVerifiedAt},
      delivered_lat = ${order.deliveredLat}, delivered_lng = ${order.deliveredLng},
      photo_key = ${order.photoKey}, photo_url = ${order.photoUrl}, updated_at = ${order.updatedAt}
    where id = ${order.id}`
}

/** The order a tracking page shows, by its token; null when there is none (or it was erased). */
export async function findOrderByTrackingToken(db: Db, token: string): Promise<Order | null> {
  const [row] = await db<Order[]>`select ${db.unsafe(ORDER_COLUMNS)} from orders where tracking_token = ${token}`
  return row ?? null
}

/** Counts a wrong PIN given for the order (the caller holds the row lock); the new count. */
export async function recordWrongPin(tx: Tx, id: string): Promise<number> {
  const [row] = await tx<{ pinAttempts: number }[]>`update orders set pin_attempts = pin_attempts + 1 where id = ${id} returning pin_attempts`
  return row?.pinAttempts ?? 0
}

export interface OrderFilter {
  statuses: OrderStatus[] | null
  placementId: string | null
  createdGte: Date | null
  createdLt: Date | null
  /** The last order of the previous page: this page starts strictly after it. */
  after: { createdAt: Date; id: string } | null
  limit: number
}

/** Statuses a partial index holds apart from the rest: orders_open (migration 00005) and orders_ended_early (00030). */
const INDEXED_APART: readonly (readonly OrderStatus[])[] = [OPEN_STATUSES, ['cancelled', 'returned']]

/**
 * A business's orders, newest first, keyset on (created_at, id): stable while new orders arrive.
 * Statuses all held apart by one partial index are also named as that index's set in the text, so
 * that even a prepared statement's generic plan (made without the values) may read them there
 * instead of walking every order of the business for a status it has few of.
 *
 * A null `businessId` is the operator's view across businesses. No index orders every order by
 * time alone (every placement would write it), so a sort of all of them would grow with a table
 * that is never pruned; instead, unless a placement or a rare status already narrows the read to a
 * few rows, each business's first page is read from its own index and the newest of those kept.
 */
export async function listOrders(db: Db, scope: { businessId: string | null; livemode: boolean }, filter: OrderFilter): Promise<Order[]> {
  const { statuses, placementId, createdGte, createdLt, after, limit } = filter
  const apart = statuses && INDEXED_APART.find((set) => statuses.every((status) => set.includes(status)))
  const eachBusiness = scope.businessId === null && placementId === null && !apart
  // Not sent until awaited: read business by business, it is the lateral join's inner query.
  const page = db<Order[]>`
    select ${db.unsafe(ORDER_COLUMNS)} from orders
    where livemode = ${scope.livemode}
      ${scope.businessId !== null ? db`and business_id = ${scope.businessId}` : eachBusiness ? db`and business_id = b.id` : db``}
      ${statuses ? db`and status = any(${statuses}::text[])` : db``}
      ${apart ? db`and status in (${literalList(db, apart)})` : db``}
      ${placementId ? db`and placement_id = ${placementId}` : db``}
      ${createdGte ? db`and created_at >= ${createdGte}` : db``}
      ${createdLt ? db`and created_at < ${createdLt}` : db``}
      ${after ? db`and (created_at, id) < (${after.createdAt}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${limit}`
  if (!eachBusiness) return page
  return db<Order[]>`
    select page.* from businesses b cross join lateral (${page}) page
    order by page.created_at desc, page.id desc
    limit ${limit}`
}

/** Orders not yet at rest, by status: the open-orders gauge. */
export async function countOpenOrders(db: Db): Promise<{ status: OrderStatus; count: number }[]> {
  return db<{ status: OrderStatus; count: number }[]>`
    select status, count(*)::int as count from orders
    where status in (${literalList(db, OPEN_STATUSES)}) group by status`
}

/** Any order by id, whoever owns it: the sandbox courier's read, after its job named it. */
export async function findOrderById(db: Db, id: string): Promise<Order | null> {
  const [row] = await db<Order[]>`select ${db.unsafe(ORDER_COLUMNS)} from orders where id = ${id}`
  return row ?? null
}

/**
 * Test orders the sandbox courier should be moving (open, not `manual`) that have not changed
 * for `idleS`: the sweep checks each still has its next step queued.
 */
export async function findIdleSandboxOrders(db: Db, idleS: number, limit: number): Promise<Order[]> {
  return db<Order[]>`
    select ${db.unsafe(ORDER_COLUMNS)} from orders
    where not livemode and status in (${literalList(db, OPEN_STATUSES)})
      and updated_at < now() - make_interval(secs => ${idleS})
      and coalesce(shipment ->> 'sandbox_scenario', 'deliver') <> 'manual'
    order by updated_at limit ${limit}`
}

/** How many of the business's orders made since `since` stand at each status. */
export async function countOrdersByStatusSince(db: Db, scope: OrderScope, since: Date): Promise<{ status: OrderStatus; count: number }[]> {
  return db<{ status: OrderStatus; count: number }[]>`
    select status, count(*)::int as count from orders
    where business_id = ${scope.businessId} and livemode = ${scope.livemode} and created_at >= ${since}
    group by status order by status`
}
