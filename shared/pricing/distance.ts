import { roundHalfAwayFromZero } from '../money.js'
import type { Point } from '../courier.js'

const EARTH_RADIUS_KM = 6371.0088

/** Great-circle distance in km, unrounded. */
export function haversineKm(a: Point, b: Point): number {
  const rad = (degrees: number) => (degrees * Math.PI) / 180
  const dLat = rad(b.lat - a.lat)
  const dLng = rad(b.lng - a.lng)
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(dLng / 2) ** 2
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)))
}

/** The reported `distance_km` without a router: straight line stretched by the road factor, to 0.01 km. */
export function roadDistanceKm(a: Point, b: Point, roadFactor: number): number {
  return roundHalfAwayFromZero(haversineKm(a, b) * roadFactor, 2)
}

/** Measures the road distance between the two ends of a shipment, in km rounded to 0.01. */
export interface DistanceProvider {
  measure(a: Point, b: Point, roadFactor: number): Promise<number>
}

export const haversineDistance: DistanceProvider = {
  async measure(a, b, roadFactor) {
    return roadDistanceKm(a, b, roadFactor)
  },
}
