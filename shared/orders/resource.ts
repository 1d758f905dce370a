import type { StoredEvent } from '../db/events.js'
import type { Order } from '../db/orders.js'
import { toMajor } from '../money.js'
import { shipmentSchema } from '../schemas/shipment.js'
import { SANDBOX_SCENARIOS, VEHICLE_SPEED_KMH, vehicleSpeedsKmh, type CourierFix, type CourierVehicleType, type HistoryEntry, type PlatformRates, type SandboxScenario } from '../courier.js'
import { roadDistanceKm } from '../pricing/distance.js'
import { cancellationTerms, type CancellationTerms } from './cancellation.js'

// Every field a shipment can be sent with, in the schema's order. `vehicle_type` and
// `option_id` are shown with the price, as the order resolved them.
// `sandbox_scenario` shows on test orders only.
const SHIPMENT_FIELDS = Object.keys(shipmentSchema.shape).filter((field) => field !== 'vehicle_type' && field !== 'option_id' && field !== 'sandbox_scenario')

/**
 * An order as the API, the CLI and events show it (docs/contracts.md section 6): snake_case,
 * amounts in major units, every shipment field present (null when not sent or erased), and
 * the `cancellation` block the caller computed for this moment.
 */
export function toOrderResource(order: Order, terms: CancellationTerms, live: LiveView = NOT_LIVE): Record<string, unknown> {
  // Built by assignment in the shown order, not by spreading objects into a literal, which V8
  // makes slower (docs/performance.md); a placement builds 100.
  const resource: Record<string, unknown> = {
    order_id: order.id,
    placement_id: order.placementId,
    livemode: order.livemode,
    status: order.status,
    version: order.version,
    price: toMajor(order.price),
    currency: order.currency,
    pricing_model: order.pricingModel,
    vehicle_type: order.vehicleType,
    option_id: order.optionId,
    option_label: order.optionLabel,
    delivery_mode: order.deliveryMode,
    distance_km: order.distanceKm,
    from_zone_name: order.fromZoneName,
    to_zone_name: order.toZoneName,
  }
  for (const field of SHIPMENT_FIELDS) resource[field] = order.shipment[field] ?? null
  if (!order.livemode) resource.sandbox_scenario = sandboxScenarioOf(order)
  resource.delivery_pin = order.deliveryPin
  resource.tracking_url = order.trackingUrl
  resource.courier = order.courier && {
    id: order.courier.id ?? null,
    name: order.courier.name,
    phone: order.courier.phone,
    vehicle_type: order.courier.vehicle_type ?? null,
    vehicle_plate: order.courier.vehicle_plate,
    // Shown while the courier is on the way only: an event of a delivery does not carry where they were.
    location: locatedBy(order) === null ? null : live.location,
  }
  resource.eta = etaOf(order, live)
  resource.proof_of_delivery = proofOf(order)
  resource.cancellation = {
    cancellable: terms.cancellable,
    fee: terms.fee === null ? null : toMajor(terms.fee),
    free_until: terms.freeUntil?.toISOString() ?? null,
  }
  resource.refunded_amount = toMajor(order.refundedAmount)
  resource.history = historyAsShown(order.history)
  resource.created_at = order.createdAt.toISOString()
  resource.updated_at = order.updatedAt.toISOString()
  return resource
}

/**
 * DESIGN 14: how a delivered order was delivered. Null until it is `delivered`. `pin_verified`
 * only when the courier gave the right PIN (an operator's delivery verifies nothing); the place
 * is the courier's last fix then, if known (null once erased).
 */
function proofOf(order: Order): Record<string, unknown> | null {
  if (order.status !== 'delivered') return null
  return {
    pin_required: order.deliveryPin !== null || order.pinVerifiedAt !== null,
    photo_required: photoRequired(order),
    pin_verified: order.pinVerifiedAt !== null,
    photo_url: order.photoUrl,
    delivered_at: deliveryStep(order)?.at ?? order.updatedAt.toISOString(),
    latitude: order.deliveredLat,
    longitude: order.deliveredLng,
  }
}

/** The step that delivered the order (the latest, should a delivery ever be written twice), if it has one. */
export function deliveryStep(order: Pick<Order, 'history'>): HistoryEntry | undefined {
  return [...order.history].reverse().find((step) => step.status === 'delivered')
}

/**
 * An order's history as the API shows it (to businesses and couriers): who made each move is kept
 * for the console. A history with no mover named (every order a placement writes, with its event)
 * is shown as it is, not copied.
 */
export function historyAsShown(history: HistoryEntry[]): Omit<HistoryEntry, 'by'>[] {
  return history.some((step) => step.by !== undefined) ? history.map(({ by: _by, ...step }) => step) : history
}

/** Whether the shipment asked for a photo at the door (DESIGN 14). */
export function photoRequired(order: Pick<Order, 'shipment'>): boolean {
  const proof = order.shipment.proof
  return typeof proof === 'object' && proof !== null && 'photo' in proof && proof.photo === true
}

/** The sandbox courier's path for a test order: as sent, or `deliver`. */
export function sandboxScenarioOf(order: Pick<Order, 'shipment'>): SandboxScenario {
  const sent = order.shipment.sandbox_scenario
  return SANDBOX_SCENARIOS.find((scenario) => scenario === sent) ?? 'deliver'
}

/** What the order resource shows beyond the row: where its courier is, and how to turn that into an ETA. */
export interface LiveView {
  location: CourierFix | null
  roadFactor: number
  /** Each vehicle's ETA speed, as the platform rates set them. */
  speedsKmh: Record<CourierVehicleType, number>
}

const NOT_LIVE: LiveView = { location: null, roadFactor: 1, speedsKmh: VEHICLE_SPEED_KMH }

/** What an order shows of its courier's whereabouts under these rates. */
export function liveView(location: CourierFix | null, rates: PlatformRates): LiveView {
  return { location, roadFactor: rates.roadFactor, speedsKmh: vehicleSpeedsKmh(rates) }
}

/** The registered courier whose position an order shows: while it is on its way (`assigned`, `picked_up`). */
export function locatedBy(order: Pick<Order, 'courierId' | 'status'>): string | null {
  return order.courierId !== null && (order.status === 'assigned' || order.status === 'picked_up') ? order.courierId : null
}

/**
 * DESIGN 14: while `assigned`, when the courier reaches the pickup; while `picked_up`, the
 * dropoff: straight line × road factor ÷ the vehicle's speed (platform rates), from where and when the courier's
 * last fix was (so every read between two fixes shows the same ETA). Null without a fix, a
 * registered courier's vehicle or the order's located ends.
 */
export function etaOf(order: Order, live: LiveView): { stage: 'pickup' | 'dropoff'; at: string } | null {
  const vehicle = order.courier?.vehicle_type
  if (!live.location || !vehicle || (order.status !== 'assigned' && order.status !== 'picked_up')) return null
  const stage = order.status === 'assigned' ? 'pickup' : 'dropoff'
  const lat = stage === 'pickup' ? order.pickupLat : order.dropoffLat
  const lng = stage === 'pickup' ? order.pickupLng : order.dropoffLng
  if (lat === null || lng === null) return null
  const km = roadDistanceKm({ lat: live.location.latitude, lng: live.location.longitude }, { lat, lng }, live.roadFactor)
  const at = new Date(Date.parse(live.location.at) + (km / live.speedsKmh[vehicle]) * 3_600_000)
  return { stage, at: at.toISOString() }
}

/**
 * An order as a business sees it at `now`: its `cancellation` previews a business cancel at that
 * moment; `location` is its courier's last fix, when the caller has it (a read, a courier's move).
 */
export function orderAsShown(order: Order, rates: PlatformRates, now: Date, location: CourierFix | null = null): Record<string, unknown> {
  return toOrderResource(order, cancellationTerms(order, rates, now, 'business'), liveView(location, rates))
}

/** An event as `GET /v2/business/events` and webhooks show it. */
export function toEventResource(event: Pick<StoredEvent, 'id' | 'type' | 'createdAt' | 'livemode' | 'sequence' | 'data'>): Record<string, unknown> {
  return {
    id: event.id,
    type: event.type,
    created_at: event.createdAt.toISOString(),
    livemode: event.livemode,
    sequence: event.sequence,
    data: event.data,
  }
}
