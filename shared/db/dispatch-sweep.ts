import { pastCursor, type Db } from './sql.js'

/** Where a sweep of orders without an offer stopped: the last order it took, and its time as Postgres's text (`pastCursor`). */
export interface SweepCursor {
  id: string
  createdAt: string
}

/** `assigned` orders whose courier is disabled: ones a disable did not hand back (it stopped midway, or an assignment raced it). */
export async function findOrdersOfDisabledCouriers(db: Db, limit: number): Promise<{ id: string; courierId: string }[]> {
  return db<{ id: string; courierId: string }[]>`
    select o.id, o.courier_id from couriers c join orders o on o.courier_id = c.id and o.status = 'assigned'
    where c.disabled_at is not null
    order by o.updated_at limit ${limit}`
}

/**
 * Live `created` orders with no pending offer and none declined or expired in the last `quietS`
 * seconds, older than `graceS`: the ones whose dispatch job may have been lost (a crash between a
 * commit and its enqueue), and those handed back or whose offer was withdrawn by a step that
 * queues no job (an operator's, `courier:disable`). The dispatcher's sweep queues them again; a
 * job already waiting absorbs it. Oldest first from `after`, so a sweep that takes up where the
 * last one stopped reaches every such order, however many older ones wait for nobody in range.
 */
export async function findOrdersWithoutOffer(db: Db, graceS: number, quietS: number, limit: number, after: SweepCursor | null): Promise<SweepCursor[]> {
  return db<SweepCursor[]>`
    select o.id, o.created_at::text as created_at from orders o
    where o.status = 'created' and o.livemode and o.pickup_lat is not null
      and o.updated_at < now() - make_interval(secs => ${graceS})
      ${after ? db`and ${pastCursor(db, 'o.created_at', 'o.id', { at: after.createdAt, id: after.id })}` : db``}
      and not exists (
        select 1 from dispatch_offers d
        where d.order_id = o.id and (d.status = 'pending' or (d.status in ('declined', 'expired') and d.decided_at > now() - make_interval(secs => ${quietS}))))
    order by o.created_at, o.id limit ${limit}`
}

/**
 * Live `created` orders with no pending offer whose pickup lies within `radiusKm` of `point`
 * (a box around it: dispatch measures the real distance), oldest first: the ones a courier who
 * just became free may take. Orders the courier cannot carry (`canCarry`'s rule: a rate-card
 * order's vehicle, a distance-priced load within their maximum) are left out here, so older ones
 * for another vehicle never fill the page; the offer's own look (`offerNext`) applies `canCarry`
 * itself. So are the orders offered to this courier since they last became `created` (declined,
 * let expire): the look would pass the courier over, and the newer orders they may take would
 * miss the page.
 */
export async function findWaitingOrdersNear(db: Db, point: { lat: number; lng: number }, radiusKm: number, carrier: { id: string; vehicleType: string; maxWeightKg: number }, limit: number): Promise<string[]> {
  const dLat = radiusKm / 111.2
  const dLng = radiusKm / (111.2 * Math.max(0.01, Math.cos((point.lat * Math.PI) / 180)))
  const rows = await db<{ id: string }[]>`
    select o.id from orders o
    where o.status = 'created' and o.livemode
      and o.pickup_lat between ${point.lat - dLat} and ${point.lat + dLat}
      and o.pickup_lng between ${point.lng - dLng} and ${point.lng + dLng}
      and case when o.pricing_model = 'rate_card' then o.vehicle_type = ${carrier.vehicleType}
        else coalesce((o.shipment ->> 'weight')::numeric, 0) * coalesce((o.shipment ->> 'quantity')::numeric, 1) <= ${carrier.maxWeightKg} end
      and not exists (
        select 1 from dispatch_offers d
        where d.order_id = o.id and (d.status = 'pending' or (d.courier_id = ${carrier.id} and d.created_at >= o.updated_at)))
    order by o.created_at limit ${limit}`
  return rows.map((row) => row.id)
}

/**
 * Live orders waiting for a courier, and how long the one waiting longest has (since it last
 * became `created`; 0 when none waits), for the gauges.
 */
export async function ordersWaitingForCourier(db: Db): Promise<{ count: number; oldestS: number }> {
  const [row] = await db<{ count: number; oldestS: number }[]>`
    select count(*)::int as count,
      coalesce(extract(epoch from now() - min((history -> -1 ->> 'at')::timestamptz)), 0)::float8 as oldest_s
    from orders where status = 'created' and livemode`
  return row
}

/** A live order no courier has taken yet, as the operator's waiting list shows it. */
export interface WaitingOrder {
  id: string
  businessId: string
  businessName: string
  /** When it last became `created` (placed, or handed back): how long it has waited for a courier. */
  waitingSince: Date
  /** The rate card's pickup zone, else the pickup state the shipment gave; null when neither is known. */
  pickupArea: string | null
  offerPending: boolean
}

/**
 * Live orders `created` for more than `olderThanS` (DESIGN 14), counted from when each last
 * became `created` (its last history step: placed, or handed back), longest waiting first.
 */
export async function listOrdersWaitingForCourier(db: Db, olderThanS: number, limit: number): Promise<WaitingOrder[]> {
  return db<WaitingOrder[]>`
    select id, business_id, business_name, waiting_since, pickup_area, offer_pending from (
      select o.id, o.business_id, b.name as business_name, (o.history -> -1 ->> 'at')::timestamptz as waiting_since,
        coalesce(o.from_zone_name, o.shipment ->> 'pickup_state') as pickup_area,
        exists (select 1 from dispatch_offers d where d.order_id = o.id and d.status = 'pending') as offer_pending
      from orders o join businesses b on b.id = o.business_id
      where o.status = 'created' and o.livemode
    ) waiting
    where waiting_since < now() - make_interval(secs => ${olderThanS})
    order by waiting_since, id limit ${limit}`
}
