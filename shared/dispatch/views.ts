import { HELD_STATUSES, type Courier } from '../courier.js'
import type { CourierRow } from '../db/couriers.js'
import type { Offer } from '../db/offers.js'
import type { Order } from '../db/orders.js'
import { historyAsShown, photoRequired } from '../orders/resource.js'

// What a courier is shown (DESIGN 14, 17.4): never the price, the business's wallet or the PIN;
// the recipient only once the order is theirs. And how a courier is shown on an order.

/** A registered courier as an order carries them (accepted offer or operator assignment): what the business, its events and the ETA see. */
export function courierOnOrder(courier: CourierRow): Courier {
  return { id: courier.id, name: courier.name, phone: courier.phone, vehicle_plate: courier.vehiclePlate, vehicle_type: courier.vehicleType }
}

/** An offer: where to pick up, roughly where it goes, what it is, until when. */
export function offerView(offer: Offer, order: Order, kmToPickup: number | null): Record<string, unknown> {
  return {
    offer_id: offer.id,
    order_id: order.id,
    pickup: { address: order.shipment.pickup_address ?? null, state: order.shipment.pickup_state ?? null, latitude: order.pickupLat, longitude: order.pickupLng },
    dropoff: { area: order.toZoneName ?? order.shipment.dropoff_state ?? null, distance_km: order.distanceKm },
    distance_to_pickup_km: kmToPickup === null ? null : Math.round(kmToPickup * 100) / 100,
    item: itemOf(order),
    vehicle_type: order.vehicleType,
    expires_at: offer.expiresAt.toISOString(),
  }
}

/**
 * An order the courier holds: both ends in full, with who to meet at each, and what the door
 * needs (`proof`): whether to ask the recipient for a PIN and take a photo, never the PIN itself.
 * The answer of the move that ends their hold (a delivery, a return, a hand-back) shows the order
 * without the people: what a courier no longer holds they no longer see.
 */
export function courierOrderView(order: Order): Record<string, unknown> {
  const s = order.shipment
  const held = HELD_STATUSES.includes(order.status)
  const person = (value: unknown) => (held ? value ?? null : null)
  return {
    order_id: order.id,
    status: order.status,
    version: order.version,
    pickup: { address: s.pickup_address ?? null, state: s.pickup_state ?? null, latitude: order.pickupLat, longitude: order.pickupLng, contact_name: person(s.sender_name), contact_phone: person(s.sender_phone) },
    dropoff: {
      address: person(s.dropoff_address), state: s.dropoff_state ?? null, latitude: held ? order.dropoffLat : null, longitude: held ? order.dropoffLng : null,
      recipient_name: person(s.recipient_name), recipient_phone: person(s.recipient_phone), alternate_phone: person(s.alternate_phone),
    },
    item: itemOf(order),
    proof: { pin_required: order.deliveryPin !== null, photo_required: photoRequired(order) },
    history: historyAsShown(order.history),
  }
}

function itemOf(order: Order): Record<string, unknown> {
  const s = order.shipment
  return { name: s.item_name ?? null, category: s.item_category ?? null, weight: s.weight ?? null, quantity: s.quantity ?? null, is_fragile: s.is_fragile ?? null }
}
