import { PricingError } from '../errors/pricing-error.js'
import type { Point } from '../courier.js'
import type { Geocoder } from './geocoder.js'

/** The address and coordinate fields a quote request and a shipment share. */
export interface ShipmentEnds {
  pickup_address: string
  pickup_state?: string
  dropoff_address: string
  dropoff_state?: string
  pickup_latitude?: number
  pickup_longitude?: number
  dropoff_latitude?: number
  dropoff_longitude?: number
}

/** The box, in degrees, that quotes and placements accept points in (`SERVICE_AREA_BBOX`). */
export interface ServiceArea {
  minLat: number
  minLng: number
  maxLat: number
  maxLng: number
}

/** Refuses an end outside the service area, pickup first; a point on the box's edge is inside. */
export function checkServiceArea(ends: { pickup: Point; dropoff: Point }, area: ServiceArea): void {
  for (const end of ['pickup', 'dropoff'] as const) {
    const { lat, lng } = ends[end]
    if (lat < area.minLat || lat > area.maxLat || lng < area.minLng || lng > area.maxLng) throw new PricingError(`${end} point is outside the service area`)
  }
}

/**
 * Places both ends of a shipment. An end whose latitude and longitude were both sent is used
 * as sent (so all four skip geocoding); any other end is geocoded from its address and state.
 * Throws `PricingError` asking for coordinates when an address cannot be placed.
 */
export async function resolveEnds(input: ShipmentEnds, geocoder: Geocoder): Promise<{ pickup: Point; dropoff: Point }> {
  const pickup = sentPoint(input.pickup_latitude, input.pickup_longitude)
  const dropoff = sentPoint(input.dropoff_latitude, input.dropoff_longitude)
  // The common case, both ends sent as coordinates, waits on nothing.
  if (pickup && dropoff) return { pickup, dropoff }
  const [pickupAt, dropoffAt] = await Promise.all([
    pickup ?? geocode('pickup', input.pickup_address, input.pickup_state, geocoder),
    dropoff ?? geocode('dropoff', input.dropoff_address, input.dropoff_state, geocoder),
  ])
  return { pickup: pickupAt, dropoff: dropoffAt }
}

function sentPoint(lat: number | undefined, lng: number | undefined): Point | null {
  return lat !== undefined && lng !== undefined ? { lat, lng } : null
}

async function geocode(end: 'pickup' | 'dropoff', address: string, state: string | undefined, geocoder: Geocoder): Promise<Point> {
  const found = await geocoder.locate(address, state)
  if (!found) throw new PricingError(`${end}_address could not be located; send ${end}_latitude and ${end}_longitude`, `${end}_address`)
  return found
}
