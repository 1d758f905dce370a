import { request } from 'undici'
import { LoadCache } from '../cache.js'
import type { PricingConfig } from '../config.js'
import type { Point } from '../courier.js'
import { locateInGazetteer } from './gazetteer.js'

/** Turns an address (and its state, where given) into a point, or null when it cannot. */
export interface Geocoder {
  locate(address: string, state?: string): Promise<Point | null>
}

export const gazetteerGeocoder: Geocoder = {
  async locate(address, state) {
    return locateInGazetteer(address, state)
  },
}

const USER_AGENT = 'courier-ordering/0.1 (pricing service)'

/**
 * A Nominatim-compatible search. Any failure (timeout, 5xx, rate limit) answers null rather
 * than throwing, so the caller can fall back to the gazetteer instead of failing a quote.
 */
export function nominatimGeocoder(baseUrl: string, timeoutMs: number): Geocoder {
  const root = baseUrl.replace(/\/+$/, '')
  return {
    async locate(address, state) {
      const query = new URLSearchParams({ q: [address, state, 'Nigeria'].filter(Boolean).join(', '), format: 'jsonv2', limit: '1', countrycodes: 'ng' })
      try {
        const response = await request(`${root}/search?${query}`, { headers: { 'user-agent': USER_AGENT, accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) })
        if (response.statusCode !== 200) {
          await response.body.dump()
          return null
        }
        const [first] = (await response.body.json()) as { lat?: string; lon?: string }[]
        const lat = Number(first?.lat)
        const lng = Number(first?.lon)
        return first && Number.isFinite(lat) && Number.isFinite(lng) ? { lat, lng } : null
      } catch {
        return null
      }
    },
  }
}

/** The first geocoder that places the address wins. */
export function firstOf(...geocoders: Geocoder[]): Geocoder {
  return {
    async locate(address, state) {
      for (const geocoder of geocoders) {
        const found = await geocoder.locate(address, state)
        if (found) return found
      }
      return null
    },
  }
}

/**
 * Where found points outlive this process (the `geocode_cache` table in the services), so
 * replicas and restarts share paid lookups. Injected so geo does not depend on the database;
 * the store owns expiry: `find` answers null for an entry older than its TTL.
 */
export interface PlaceStore {
  find(query: string): Promise<Point | null>
  store(query: string, at: Point): Promise<void>
}

export function storeCached(inner: Geocoder, places: PlaceStore): Geocoder {
  return {
    async locate(address, state) {
      const key = cacheKey(address, state)
      const cached = await places.find(key)
      if (cached) return cached
      const found = await inner.locate(address, state)
      if (found) await places.store(key, found)
      return found
    },
  }
}

/**
 * Remembers answers in this process, misses included (the gazetteer's answer cannot change and
 * a provider's rarely does). Bounded so a stream of unique addresses cannot exhaust memory.
 */
export function memoryCached(inner: Geocoder, ttlSeconds: number, maxEntries = 10_000): Geocoder {
  const entries = new LoadCache<string, Point | null>({ max: maxEntries, ttlMs: ttlSeconds * 1000 })
  return {
    locate(address, state) {
      return entries.get(cacheKey(address, state), () => inner.locate(address, state))
    },
  }
}

function cacheKey(address: string, state?: string): string {
  return `${address.trim().toLowerCase().replace(/\s+/g, ' ')}|${(state ?? '').trim().toLowerCase()}`
}

/** The geocoder the configuration names, with its caches in front. */
export function createGeocoder(config: Pick<PricingConfig, 'GEOCODER' | 'NOMINATIM_URL' | 'GEOCODER_TIMEOUT_MS' | 'GEOCODE_CACHE_TTL_S'>, places: PlaceStore): Geocoder {
  if (config.GEOCODER === 'gazetteer') return memoryCached(gazetteerGeocoder, config.GEOCODE_CACHE_TTL_S)
  const remote = storeCached(nominatimGeocoder(config.NOMINATIM_URL, config.GEOCODER_TIMEOUT_MS), places)
  // Misses are kept briefly only: a provider outage must not pin "not found" for a week.
  return memoryCached(firstOf(remote, gazetteerGeocoder), Math.min(config.GEOCODE_CACHE_TTL_S, 3600))
}
