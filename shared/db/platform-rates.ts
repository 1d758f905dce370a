import { VEHICLE_SPEED_KMH, type PlatformRates } from '../courier.js'
import type { Db, Tx } from './sql.js'

/**
 * The defaults (NGN 500 + 120/km + 50/kg, at least 1000, trips up to 80 km, cancels free for 120 s
 * after assignment and 25 % after; ETAs at bike 25, car 30, bus_van 25, truck 20 km/h), in kobo,
 * until an operator sets rates.
 */
export const DEFAULT_PLATFORM_RATES: PlatformRates = {
  baseFare: 50_000, perKm: 12_000, perKg: 5_000, minFare: 100_000, roadFactor: 1.3, maxDistanceKm: 80, cancelFreeWindowS: 120, cancellationFeePercent: 25,
  bikeSpeedKmh: VEHICLE_SPEED_KMH.bike, carSpeedKmh: VEHICLE_SPEED_KMH.car, busVanSpeedKmh: VEHICLE_SPEED_KMH.bus_van, truckSpeedKmh: VEHICLE_SPEED_KMH.truck,
}

/** The columns of the one rates row, for a statement that reads them beside other things. */
export const RATES_COLUMNS = 'base_fare, per_km, per_kg, min_fare, road_factor, max_distance_km, cancel_free_window_s, cancellation_fee_percent, bike_speed_kmh, car_speed_kmh, bus_van_speed_kmh, truck_speed_kmh'

// numeric columns come back as strings; the three are read as numbers here. Every column is
// null when a statement read the rates with an outer join and no operator has set them.
type RatesRow = Omit<PlatformRates, 'roadFactor' | 'maxDistanceKm' | 'cancellationFeePercent'> & { roadFactor: string; maxDistanceKm: string; cancellationFeePercent: string }

/** The rates columns as an outer join reads them: all null when there is no row. */
export type RatesColumns = RatesRow | { [K in keyof RatesRow]: null }

/** The rates a row holds, or the defaults when there is no row (or its columns are all null). */
export function ratesFromRow(row: RatesColumns | undefined): PlatformRates {
  if (!row || row.baseFare === null) return { ...DEFAULT_PLATFORM_RATES }
  return {
    ...row,
    roadFactor: Number(row.roadFactor),
    maxDistanceKm: Number(row.maxDistanceKm),
    cancellationFeePercent: Number(row.cancellationFeePercent),
  }
}

/** The rates distance pricing uses right now. */
export async function getPlatformRates(db: Db): Promise<PlatformRates> {
  const [row] = await db<RatesRow[]>`select ${db.unsafe(RATES_COLUMNS)} from platform_rates where id`
  return ratesFromRow(row)
}

/** The rates in force, locked until the transaction ends, so two partial changes both land. */
export async function lockPlatformRates(tx: Tx): Promise<PlatformRates> {
  const [row] = await tx<RatesRow[]>`select ${tx.unsafe(RATES_COLUMNS)} from platform_rates where id for update`
  return ratesFromRow(row)
}

export async function savePlatformRates(tx: Tx, rates: PlatformRates): Promise<void> {
  await tx`
    insert into platform_rates (id, base_fare, per_km, per_kg, min_fare, road_factor, max_distance_km, cancel_free_window_s, cancellation_fee_percent,
      bike_speed_kmh, car_speed_kmh, bus_van_speed_kmh, truck_speed_kmh, updated_at)
    values (true, ${rates.baseFare}, ${rates.perKm}, ${rates.perKg}, ${rates.minFare}, ${rates.roadFactor}, ${rates.maxDistanceKm}, ${rates.cancelFreeWindowS}, ${rates.cancellationFeePercent},
      ${rates.bikeSpeedKmh}, ${rates.carSpeedKmh}, ${rates.busVanSpeedKmh}, ${rates.truckSpeedKmh}, now())
    on conflict (id) do update set base_fare = excluded.base_fare, per_km = excluded.per_km, per_kg = excluded.per_kg,
      min_fare = excluded.min_fare, road_factor = excluded.road_factor, max_distance_km = excluded.max_distance_km,
      cancel_free_window_s = excluded.cancel_free_window_s, cancellation_fee_percent = excluded.cancellation_fee_percent,
      bike_speed_kmh = excluded.bike_speed_kmh, car_speed_kmh = excluded.car_speed_kmh, bus_van_speed_kmh = excluded.bus_van_speed_kmh,
      truck_speed_kmh = excluded.truck_speed_kmh, updated_at = now()`
}
