import { PlatformRatesError } from '../errors/platform-rates-error.js'
import { hasAtMostTwoDecimals, toMinor } from '../money.js'
import type { PlatformRates } from '../courier.js'
import type { Db, Sql, Tx } from './sql.js'

/** DESIGN.md's defaults (NGN 500 + 120/km + 50/kg, at least 1000, trips up to 80 km), in kobo, until an operator sets rates. */
export const DEFAULT_PLATFORM_RATES: PlatformRates = { baseFare: 50_000, perKm: 12_000, perKg: 5_000, minFare: 100_000, roadFactor: 1.3, maxDistanceKm: 80 }

interface RatesRow {
  base_fare: number
  per_km: number
  per_kg: number
  min_fare: number
  road_factor: string
  max_distance_km: string
}

const fromRow = (row: RatesRow): PlatformRates => ({ baseFare: row.base_fare, perKm: row.per_km, perKg: row.per_kg, minFare: row.min_fare, roadFactor: Number(row.road_factor), maxDistanceKm: Number(row.max_distance_km) })

/** The rates distance pricing uses right now. */
export async function getPlatformRates(db: Db): Promise<PlatformRates> {
  const [row] = await db<RatesRow[]>`select base_fare, per_km, per_kg, min_fare, road_factor, max_distance_km from platform_rates where id`
  return row ? fromRow(row) : { ...DEFAULT_PLATFORM_RATES }
}

/** A change as the operator types it: money in major units, the road factor as a plain ratio, the limit in km. */
export type PlatformRatesChange = Partial<PlatformRates>

/**
 * Changes only the rates named and returns the rates now in force (kobo). Throws
 * `PlatformRatesError` for negative money, more than 2 decimals or a road factor below 1.
 */
export async function setPlatformRates(db: Db, change: PlatformRatesChange): Promise<PlatformRates> {
  const inKobo: Partial<PlatformRates> = {}
  for (const field of ['baseFare', 'perKm', 'perKg', 'minFare'] as const) {
    const value = change[field]
    if (value === undefined) continue
    if (!(value >= 0) || !hasAtMostTwoDecimals(value)) throw new PlatformRatesError(`${field} must be a non-negative amount with at most 2 decimals`)
    inKobo[field] = toMinor(value)
  }
  if (change.roadFactor !== undefined) {
    if (!(change.roadFactor >= 1) || !Number.isFinite(change.roadFactor)) throw new PlatformRatesError('roadFactor must be at least 1')
    inKobo.roadFactor = change.roadFactor
  }
  if (change.maxDistanceKm !== undefined) {
    if (!(change.maxDistanceKm > 0) || !Number.isFinite(change.maxDistanceKm)) throw new PlatformRatesError('maxDistanceKm must be a positive number of km')
    inKobo.maxDistanceKm = change.maxDistanceKm
  }
  const write = async (tx: Tx) => {
    // The lock makes two concurrent partial changes both land instead of one overwriting the other.
    const [row] = await tx<RatesRow[]>`select base_fare, per_km, per_kg, min_fare, road_factor, max_distance_km from platform_rates where id for update`
    const next = { ...(row ? fromRow(row) : DEFAULT_PLATFORM_RATES), ...inKobo }
    await tx`
      insert into platform_rates (id, base_fare, per_km, per_kg, min_fare, road_factor, max_distance_km, updated_at)
      values (true, ${next.baseFare}, ${next.perKm}, ${next.perKg}, ${next.minFare}, ${next.roadFactor}, ${next.maxDistanceKm}, now())
      on conflict (id) do update set base_fare = excluded.base_fare, per_km = excluded.per_km, per_kg = excluded.per_kg,
        min_fare = excluded.min_fare, road_factor = excluded.road_factor, max_distance_km = excluded.max_distance_km, updated_at = now()`
    return next
  }
  return 'savepoint' in db ? write(db as Tx) : ((db as Sql).begin(write) as Promise<PlatformRates>)
}
