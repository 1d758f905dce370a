import type { Point } from '../courier.js'
import type { Db } from './sql.js'

// Each store deletes at most this many expired rows, so the table shrinks steadily without one
// write ever paying for a large backlog.
const EXPIRED_ROWS_PER_STORE = 100

/** A point stored for this query no longer ago than the TTL, or null: an expired row is never read. */
export async function findCachedPlace(db: Db, query: string, ttlSeconds: number): Promise<Point | null> {
  const [row] = await db<{ latitude: number; longitude: number }[]>`
    select latitude, longitude from geocode_cache
    where query = ${query} and created_at > now() - make_interval(secs => ${ttlSeconds})`
  return row ? { lat: row.latitude, lng: row.longitude } : null
}

/** Stores or refreshes the point for a query, and removes a few rows older than the TTL. */
export async function storeCachedPlace(db: Db, query: string, at: Point, ttlSeconds: number): Promise<void> {
  await db`
    insert into geocode_cache (query, latitude, longitude) values (${query}, ${at.lat}, ${at.lng})
    on conflict (query) do update set latitude = excluded.latitude, longitude = excluded.longitude, created_at = now()`
  await db`
    delete from geocode_cache where query in (
      select query from geocode_cache where created_at <= now() - make_interval(secs => ${ttlSeconds})
      limit ${EXPIRED_ROWS_PER_STORE})`
}

/** The table as a geocoder's shared cache (see `PlaceStore` in shared/geo/geocoder.ts). */
export function geocodeCacheTable(db: Db, ttlSeconds: number) {
  return {
    find: (query: string) => findCachedPlace(db, query, ttlSeconds),
    store: (query: string, at: Point) => storeCachedPlace(db, query, at, ttlSeconds),
  }
}
