import { HELD_STATUSES, type CourierVehicleType } from '../courier.js'
import { ORDER_COLUMNS, type Order } from './orders.js'
import { literalList, type Db, type Tx } from './sql.js'

/** A courier as stored; `maxWeightKg` bounds the distance-priced orders dispatch offers them. */
export interface CourierRow {
  id: string
  name: string
  phone: string
  vehicleType: CourierVehicleType
  vehiclePlate: string | null
  maxWeightKg: number
  disabledAt: Date | null
  createdAt: Date
}

const COLUMNS = 'id, name, phone, vehicle_type, vehicle_plate, max_weight_kg::float8 as max_weight_kg, disabled_at, created_at'

export async function insertCourier(db: Db, courier: Omit<CourierRow, 'disabledAt' | 'createdAt'>): Promise<CourierRow> {
  const [row] = await db<CourierRow[]>`
    insert into couriers (id, name, phone, vehicle_type, vehicle_plate, max_weight_kg)
    values (${courier.id}, ${courier.name}, ${courier.phone}, ${courier.vehicleType}, ${courier.vehiclePlate}, ${courier.maxWeightKg})
    returning ${db.unsafe(COLUMNS)}`
  return row
}

/** The oldest enabled courier with this (stored, E.164) phone: at most one since migration 00023, but for couriers it found sharing one. */
export async function findEnabledCourierByPhone(db: Db, phone: string): Promise<CourierRow | null> {
  const [row] = await db<CourierRow[]>`select ${db.unsafe(COLUMNS)} from couriers where phone = ${phone} and disabled_at is null order by created_at, id limit 1`
  return row ?? null
}

/** A courier's phone set (in its stored form) and no longer shared; null: no such courier. */
export async function updateCourierPhone(db: Db, id: string, phone: string): Promise<CourierRow | null> {
  const [row] = await db<CourierRow[]>`update couriers set phone = ${phone}, phone_shared_with = null where id = ${id} returning ${db.unsafe(COLUMNS)}`
  return row ?? null
}

export async function findCourier(db: Db, id: string): Promise<CourierRow | null> {
  const [row] = await db<CourierRow[]>`select ${db.unsafe(COLUMNS)} from couriers where id = ${id}`
  return row ?? null
}

/** A courier as dispatch weighs them: whether they hold a pending offer, and how many orders not yet at rest. */
export interface DispatchCandidate extends CourierRow {
  offerPending: boolean
  activeOrders: number
}

/** These couriers, disabled ones left out, with what dispatch needs to know of each: one query. */
export async function findDispatchCandidates(db: Db, ids: string[]): Promise<DispatchCandidate[]> {
  return db<DispatchCandidate[]>`
    select c.id, c.name, c.phone, c.vehicle_type, c.vehicle_plate, c.max_weight_kg::float8 as max_weight_kg, c.disabled_at, c.created_at,
      exists (select 1 from dispatch_offers d where d.courier_id = c.id and d.status = 'pending') as offer_pending,
      (select count(*)::int from orders o where o.courier_id = c.id and o.status in (${literalList(db, HELD_STATUSES)})) as active_orders
    from couriers c where c.id = any(${ids}::uuid[]) and c.disabled_at is null`
}

export async function listCouriers(db: Db, limit: number): Promise<CourierRow[]> {
  return db<CourierRow[]>`select ${db.unsafe(COLUMNS)} from couriers order by created_at desc limit ${limit}`
}

export async function insertCourierToken(db: Db, token: { id: string; courierId: string; tokenHash: string; displayPrefix: string }): Promise<void> {
  await db`
    insert into courier_tokens (id, courier_id, token_hash, display_prefix)
    values (${token.id}, ${token.courierId}, ${token.tokenHash}, ${token.displayPrefix})`
}

/** The courier a live token belongs to, unless the token is revoked or the courier disabled. */
export async function findCourierByTokenHash(db: Db, tokenHash: string): Promise<CourierRow | null> {
  const [row] = await db<CourierRow[]>`
    select ${db.unsafe(COLUMNS.split(', ').map((column) => `c.${column}`).join(', '))}
    from courier_tokens t join couriers c on c.id = t.courier_id
    where t.token_hash = ${tokenHash} and t.revoked_at is null and c.disabled_at is null`
  return row ?? null
}

/** Of these token hashes, the ones that still let a courier in (not revoked, the courier enabled): in one query. */
export async function findLiveTokenHashes(db: Db, tokenHashes: string[]): Promise<Set<string>> {
  const rows = await db<{ tokenHash: string }[]>`
    select t.token_hash from courier_tokens t join couriers c on c.id = t.courier_id
    where t.token_hash = any(${tokenHashes}::text[]) and t.revoked_at is null and c.disabled_at is null`
  return new Set(rows.map((row) => row.tokenHash))
}

/** Disables the courier and revokes every token of theirs; returns the token hashes revoked now (for the gateways' caches). Null: no such courier. */
export async function disableCourierRow(tx: Tx, id: string): Promise<{ courier: CourierRow; tokenHashes: string[] } | null> {
  const [courier] = await tx<CourierRow[]>`
    update couriers set disabled_at = coalesce(disabled_at, now()) where id = ${id} returning ${tx.unsafe(COLUMNS)}`
  if (!courier) return null
  // The tokens revoked now: one revoked before was announced to the gateways then.
  const tokens = await tx<{ tokenHash: string }[]>`
    update courier_tokens set revoked_at = now() where courier_id = ${id} and revoked_at is null returning token_hash`
  return { courier, tokenHashes: tokens.map((token) => token.tokenHash) }
}

/** The courier's orders not yet at rest, oldest first. */
export async function findActiveOrderIdsOfCourier(db: Db, courierId: string): Promise<{ id: string; status: string }[]> {
  return db<{ id: string; status: string }[]>`
    select id, status from orders where courier_id = ${courierId} and status in (${literalList(db, HELD_STATUSES)}) order by assigned_at, id`
}

/** The courier's orders not yet at rest, whole, oldest assignment first: one query however many they hold. */
export async function findHeldOrdersOfCourier(db: Db, courierId: string): Promise<Order[]> {
  return db<Order[]>`
    select ${db.unsafe(ORDER_COLUMNS)} from orders
    where courier_id = ${courierId} and status in (${literalList(db, HELD_STATUSES)}) order by assigned_at, id`
}

/** How many orders each courier holds now: dispatch leaves out those at `COURIER_CAPACITY`. */
export async function countActiveOrders(db: Db, courierIds: string[]): Promise<Map<string, number>> {
  const rows = await db<{ courierId: string; count: number }[]>`
    select courier_id, count(*)::int as count from orders
    where courier_id = any(${courierIds}::uuid[]) and status in (${literalList(db, HELD_STATUSES)}) group by courier_id`
  return new Map(rows.map((row) => [row.courierId, row.count]))
}

/** Each courier's orders not yet at rest, oldest first: the operator's couriers page. */
export async function findActiveOrdersOfCouriers(db: Db, courierIds: string[]): Promise<Map<string, { id: string; status: string }[]>> {
  const rows = await db<{ courierId: string; id: string; status: string }[]>`
    select courier_id, id, status from orders
    where courier_id = any(${courierIds}::uuid[]) and status in (${literalList(db, HELD_STATUSES)}) order by assigned_at, id`
  const byCourier = new Map<string, { id: string; status: string }[]>()
  for (const row of rows) byCourier.set(row.courierId, [...(byCourier.get(row.courierId) ?? []), { id: row.id, status: row.status }])
  return byCourier
}
