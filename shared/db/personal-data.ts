import { OPEN_STATUSES } from '../courier.js'
import { literalList, type Db, type Tx } from './sql.js'

/*
 * Where personal data lives, and its erasure (docs/security.md):
 * - placements.shipments: each shipment as sent (names, phones, e-mail, addresses, coordinates,
 *   item description);
 * - orders.shipment: the same per order; orders.courier: the courier's name, phone and plate;
 *   orders.history: free-text reasons of moves;
 * - events.data: the order as it was shown, with all of the above;
 * - order_trail_points: where the courier went while the order was theirs; orders.delivery_pin
 *   and delivered_lat/lng: the recipient's PIN and where the courier delivered;
 * - dispatch_offers: which couriers were offered the order, and a decline's free-text reason.
 * Erasing sets the shipment's personal fields to null (the keys go from the shipment itself),
 * the courier to null, drops the reasons and the trail, and the offers of an order at rest (an
 * open one keeps them, reasons dropped: dispatch reads them); ids, prices, statuses, times and the
 * ledger stay.
 * geocode_cache rows (keyed by address) expire after GEOCODE_CACHE_TTL_S on their own.
 */

/** Which orders to erase: those of whole placements, or single orders (one person's). */
export type ErasureScope = { placementIds: string[] } | { orderIds: string[] }

/** Settled placements older than `days` not yet erased, at most `limit`, locked for the erasure. */
export async function claimPlacementsOlderThan(tx: Tx, days: number, limit: number): Promise<string[]> {
  const rows = await tx<{ id: string }[]>`
    select id from placements
    where personal_data_erased_at is null and status <> 'pending' and created_at < now() - make_interval(days => ${days})
    order by created_at limit ${limit} for update skip locked`
  return rows.map((row) => row.id)
}

/** Erases `fields` from every shipment of the placements, on their rows and marks them erased. */
export async function erasePlacementShipments(tx: Tx, placementIds: string[], fields: string[]): Promise<void> {
  await tx`
    update placements p
    set shipments = (select coalesce(jsonb_agg(s - ${fields}::text[] order by n), '[]') from jsonb_array_elements(p.shipments) with ordinality as e(s, n)),
        personal_data_erased_at = now()
    where p.id = any(${placementIds}::uuid[])`
}

/**
 * Erases from the placements' stored shipments only the shipments whose phone fields end in
 * `phoneDigits` (the last ten digits: the national number, whatever prefix was sent).
 */
export async function erasePlacementShipmentsByPhone(tx: Tx, orderIds: string[], phoneDigits: string, fields: string[]): Promise<void> {
  await tx`
    update placements p
    set shipments = (
      select coalesce(jsonb_agg(case when ${phoneDigits} in (
          right(regexp_replace(coalesce(s ->> 'recipient_phone', ''), '\\D', '', 'g'), 10),
          right(regexp_replace(coalesce(s ->> 'alternate_phone', ''), '\\D', '', 'g'), 10),
          right(regexp_replace(coalesce(s ->> 'sender_phone', ''), '\\D', '', 'g'), 10))
        then s - ${fields}::text[] else s end order by n), '[]')
      from jsonb_array_elements(p.shipments) with ordinality as e(s, n))
    where p.id in (select placement_id from orders where id = any(${orderIds}))`
}

/**
 * Erases the orders' personal fields, courier details, reasons and delivery photos' links, and the
 * same in their events; returns the photo store keys the orders held, for the caller to remove.
 */
export async function eraseOrders(tx: Tx, scope: ErasureScope, fields: string[]): Promise<string[]> {
  const orderIds = 'orderIds' in scope
    ? scope.orderIds
    : (await tx<{ id: string }[]>`select id from orders where placement_id = any(${scope.placementIds}::uuid[])`).map((row) => row.id)
  if (orderIds.length === 0) return []
  const photos = await tx<{ photoKey: string }[]>`select photo_key from orders where id = any(${orderIds}) and photo_key is not null`
  await tx`
    update orders set
      shipment = shipment - ${fields}::text[],
      courier = null, pickup_lat = null, pickup_lng = null, dropoff_lat = null, dropoff_lng = null,
      delivery_pin = null, delivered_lat = null, delivered_lng = null, tracking_token = null, photo_key = null, photo_url = null,
      history = (select coalesce(jsonb_agg(h - 'reason' order by n), '[]') from jsonb_array_elements(history) with ordinality as e(h, n))
    where id = any(${orderIds})`
  await tx`delete from order_trail_points where order_id = any(${orderIds})`
  await tx`
    delete from dispatch_offers d using orders o
    where d.order_id = any(${orderIds}) and o.id = d.order_id and d.status <> 'pending' and o.status not in (${literalList(tx, OPEN_STATUSES)})`
  await tx`update dispatch_offers set reason = null where order_id = any(${orderIds}) and reason is not null`
  // The events keep the order as it was shown: the same fields become null there (their data is
  // json text, edited as jsonb).
  const nulls = JSON.stringify(Object.fromEntries(fields.map((field) => [field, null])))
  await tx`
    update events set data = jsonb_set(data::jsonb, '{order}', (data::jsonb -> 'order') || ${nulls}::text::jsonb || jsonb_build_object(
      'courier', null,
      'delivery_pin', null,
      'proof_of_delivery', case when jsonb_typeof(data::jsonb -> 'order' -> 'proof_of_delivery') = 'object'
        then (data::jsonb -> 'order' -> 'proof_of_delivery') || '{"latitude": null, "longitude": null, "photo_url": null}'::jsonb else 'null'::jsonb end,
      'history', (select coalesce(jsonb_agg(h - 'reason' order by n), '[]') from jsonb_array_elements(coalesce(data::jsonb -> 'order' -> 'history', '[]')) with ordinality as e(h, n))))::json
    where order_id = any(${orderIds})`
  return photos.map((row) => row.photoKey)
}

/** The orders of one person, found by any phone field of their shipment (the last ten digits). */
export async function findOrdersByPhone(db: Db, phoneDigits: string): Promise<{ id: string; status: string }[]> {
  return db<{ id: string; status: string }[]>`
    select id, status from orders
    where ${phoneDigits} in (
      right(regexp_replace(coalesce(shipment ->> 'recipient_phone', ''), '\\D', '', 'g'), 10),
      right(regexp_replace(coalesce(shipment ->> 'alternate_phone', ''), '\\D', '', 'g'), 10),
      right(regexp_replace(coalesce(shipment ->> 'sender_phone', ''), '\\D', '', 'g'), 10))
    order by id`
}
