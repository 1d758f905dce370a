import type { Point } from '../courier.js'
import type { Db } from './sql.js'

/** A point stored for this query no longer ago than the TTL, or null. */
export async function findCachedPlace(db: Db, query: string, ttlSeconds: number): Promise<Point | null> {
  const [row] = await db<{ latitude: number; longitude: number }[]>`
    select latitude, longitude from geocode_cache
    where query = ${query} and created_at > now() - make_interval(secs => ${ttlSeconds})`
  return row ? { lat: row.latitude, lng: row.longitude } : null
}

/** Stores or refreshes the point for a query. */
export async function storeCachedPlace(db: Db, query: string, at: Point): Promise<void> {
  await db`
    insert into geocode_cache (query, latitude, longitude) values (${query}, ${at.lat}, ${at.lng})
    on conflict (query) do update set latitude = excluded.latitude, longitude = excluded.longitude, created_at = now()`
}
