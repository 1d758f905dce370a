// The courier's own words, shared by every layer: where (a point on the map), with what
// (the vehicle a business asks for), how that vehicle is shown on a quote (the delivery mode),
// and the rate cards, platform rates and quotes that price a delivery.
// A leaf: it imports nothing of ours, so anything may import it without an arrow pointing up.

export const VEHICLE_TYPES = ['bike', 'bus_van', 'truck'] as const
export type VehicleType = (typeof VEHICLE_TYPES)[number]

export type DeliveryMode = 'MOTORBIKE' | 'BUS_VAN' | 'TRUCK'
export const DELIVERY_MODES: Record<VehicleType, DeliveryMode> = {
  bike: 'MOTORBIKE',
  bus_van: 'BUS_VAN',
  truck: 'TRUCK',
}
/** The vehicle a delivery mode is shown for: the inverse of DELIVERY_MODES. */
export const VEHICLE_OF_MODE: Record<DeliveryMode, VehicleType> = {
  MOTORBIKE: 'bike',
  BUS_VAN: 'bus_van',
  TRUCK: 'truck',
}

export interface Point {
  lat: number
  lng: number
}

/** A zone of a rate card: a closed GeoJSON ring of `[lng, lat]` pairs. */
export interface Zone {
  name: string
  polygon: [number, number][]
}

export interface RateOption {
  id: string
  vehicleType: VehicleType
  label: string
  /** Bike bands only: the lower edge, exclusive except for the lowest band. */
  minWeightKg: number | null
  maxWeightKg: number
  /** Price in kobo keyed by `priceKey(from, to)`; one-way. */
  prices: Map<string, number>
}

/** The version of a card in force for a business, as the engine reads it. */
export interface RateCard {
  rateCardId: string
  name: string
  version: number
  versionId: string
  currency: string
  updatedAt: Date
  /** In the card's order: the first zone that contains a point wins. */
  zones: Zone[]
  options: RateOption[]
}

/** Platform rates: distance pricing's fares in kobo, and the limits every quote obeys. */
export interface PlatformRates {
  baseFare: number
  perKm: number
  perKg: number
  minFare: number
  roadFactor: number
  /** Local means local: a trip whose reported distance_km exceeds this is refused, whatever the model. */
  maxDistanceKm: number
  /** A business cancels an assigned order free for this long after the assignment. */
  cancelFreeWindowS: number
  /** The fee after the window, in percent of the price (two decimals at most). */
  cancellationFeePercent: number
  /** What an ETA divides the road distance by, per courier vehicle (DESIGN 14), in km/h. */
  bikeSpeedKmh: number
  carSpeedKmh: number
  busVanSpeedKmh: number
  truckSpeedKmh: number
}

export function priceKey(from: string, to: string): string {
  return `${from}\u0000${to}`
}

/** What the engine needs once both ends are placed on the map. */
export interface PricingRequest {
  pickup: Point
  dropoff: Point
  /** Billable weight in kg (a placement passes weight × quantity). */
  weight: number
  vehicleType?: VehicleType
  optionId?: string
}

/** A priced shipment, money in kobo. `toQuoteResponse` shows it in major units. */
export interface Quote {
  price: number
  distanceKm: number
  currency: string
  pricingModel: 'rate_card' | 'distance'
  optionId: string | null
  optionLabel: string | null
  deliveryMode: DeliveryMode
  fromZoneName: string | null
  toZoneName: string | null
}

/** Where an order is in its life; `shared/orders/state-machine.ts` says which moves are allowed. */
export const ORDER_STATUSES = ['created', 'assigned', 'picked_up', 'delivered', 'failed', 'returned', 'cancelled'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]
/**
 * The statuses an order can still move from: the open-orders gauge counts these, and the partial
 * index `orders_open` (migration 00005) holds them, its predicate written from this list.
 */
export const OPEN_STATUSES: readonly OrderStatus[] = ['created', 'assigned', 'picked_up', 'failed']
/**
 * The open statuses in which a courier holds the order (a failed one is on its way back): the
 * partial index `orders_courier_active` (migration 00015) holds them, its predicate written from
 * this list, and the courier queries of `shared/db/couriers.ts` name it so the planner uses it.
 */
export const HELD_STATUSES: readonly OrderStatus[] = ['assigned', 'picked_up', 'failed']

export const ORDER_EVENT_TYPES = [
  'order.created', 'order.assigned', 'order.unassigned', 'order.picked_up',
  'order.delivered', 'order.failed', 'order.returned', 'order.cancelled',
] as const
export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number]

/** The path the sandbox courier takes a test order along (a shipment's `sandbox_scenario`). */
export const SANDBOX_SCENARIOS = ['deliver', 'fail', 'unassign', 'manual'] as const
export type SandboxScenario = (typeof SANDBOX_SCENARIOS)[number]

/** Who may ask for a move: the courier side (the operator's dispatch, the sandbox courier), the business, or the operator. */
export type OrderActor = 'dispatch' | 'business' | 'operator'

export type CourierShift = 'available' | 'offline'

/** The reason an offer is declined for a courier who goes off shift while it is pending. */
export const OFF_SHIFT_REASON = 'went off shift'

/** What a registered courier rides: a car carries what a bike cannot, and is never a rate card's option. */
export const COURIER_VEHICLE_TYPES = ['bike', 'car', 'bus_van', 'truck'] as const
export type CourierVehicleType = (typeof COURIER_VEHICLE_TYPES)[number]

/** DESIGN 14: what a courier carries unless `courier:create` says otherwise. */
export const DEFAULT_MAX_WEIGHT_KG: Record<CourierVehicleType, number> = { bike: 20, car: 100, bus_van: 1000, truck: 5000 }

/** DESIGN 14: the speed an ETA assumes, per vehicle, in km/h. */
export const VEHICLE_SPEED_KMH: Record<CourierVehicleType, number> = { bike: 25, car: 30, bus_van: 25, truck: 20 }

/** Each vehicle's ETA speed as the platform rates in force set it. */
export function vehicleSpeedsKmh(rates: Pick<PlatformRates, 'bikeSpeedKmh' | 'carSpeedKmh' | 'busVanSpeedKmh' | 'truckSpeedKmh'>): Record<CourierVehicleType, number> {
  return { bike: rates.bikeSpeedKmh, car: rates.carSpeedKmh, bus_van: rates.busVanSpeedKmh, truck: rates.truckSpeedKmh }
}

/**
 * Who holds an order, as the order keeps it. `id` and `vehicle_type` are set for a registered
 * courier; an operator's free-text courier (someone outside the system) has neither.
 */
export interface Courier {
  id?: string
  name: string
  phone: string
  vehicle_plate: string | null
  vehicle_type?: CourierVehicleType
}

/** A courier's last reported position. */
export interface CourierFix {
  latitude: number
  longitude: number
  at: string
}

/**
 * Who made a move, as its history step keeps it: the courier holding the order, an operator (CLI
 * or console), the sandbox (a test order moved by its business by hand, or by the sandbox courier),
 * or the business (a cancel).
 */
export type OrderMover = 'courier' | 'operator' | 'sandbox' | 'business'

/** One step of an order's history, as stored; the API shows it without `by`. */
export interface HistoryEntry {
  status: OrderStatus
  at: string
  reason?: string
  /** Absent on the placement's `created` step, and on steps made before movers were kept. */
  by?: OrderMover
}

/** What is kept of a console account's (or a courier phone's) recent wrong login tries (LOGIN_RULE). */
export interface LoginFailures {
  /** When the failed tries of the last LOGIN_RULE.windowS were made, oldest first; fewer than LOGIN_RULE.limit. */
  failedLoginTimes: Date[]
  lockedUntil: Date | null
}
