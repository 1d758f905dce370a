import { request } from 'undici'
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

/**
 * An OSRM-compatible router (`/route/v1/driving/lng,lat;lng,lat`). A slow or failing router
 * must not block quoting, so any failure falls back to the haversine estimate.
 */
export function osrmDistance(baseUrl: string, timeoutMs: number): DistanceProvider {
  const root = baseUrl.replace(/\/+$/, '')
  return {
    async measure(a, b, roadFactor) {
      try {
        const url = `${root}/route/v1/driving/${a.lng},${a.lat};${b.lng},${b.lat}?overview=false`
        const response = await request(url, { signal: AbortSignal.timeout(timeoutMs) })
        if (response.statusCode !== 200) {
          await response.body.dump()
          return roadDistanceKm(a, b, roadFactor)
        }
        const body = (await response.body.json()) as { code?: string; routes?: { distance?: number }[] }
        const meters = body.routes?.[0]?.distance
        if (body.code !== 'Ok' || typeof meters !== 'number' || !Number.isFinite(meters)) return roadDistanceKm(a, b, roadFactor)
        return roundHalfAwayFromZero(meters / 1000, 2)
      } catch {
        return roadDistanceKm(a, b, roadFactor)
      }
    },
  }
}

/** The router the configuration names, or the haversine estimate when none is set. */
export function createDistanceProvider(config: { ROUTING_URL?: string; ROUTING_TIMEOUT_MS: number }): DistanceProvider {
  return config.ROUTING_URL ? osrmDistance(config.ROUTING_URL, config.ROUTING_TIMEOUT_MS) : haversineDistance
}
