import { request } from 'undici'
import { roundHalfAwayFromZero } from '../money.js'
import { haversineDistance, roadDistanceKm, type DistanceProvider } from './distance.js'

// The router, apart from distance.ts: only pricing and the worker measure through it, and the
// order resource, the couriers and the CLI, which use the straight-line estimate, do not load undici.

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
