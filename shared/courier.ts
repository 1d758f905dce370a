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
