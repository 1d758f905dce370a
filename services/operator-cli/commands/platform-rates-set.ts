import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { changePlatformRates, readPlatformRate } from '../../../shared/pricing/platform-rates.js'
import { toMajor } from '../../../shared/money.js'
import type { PlatformRates } from '../../../shared/courier.js'
import { defineCommand, type Flags } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

// Each flag and the rate it sets; every value is read and bounded by the rules the console uses too.
const RATE_FLAGS = {
  'base-fare': 'baseFare', 'per-km': 'perKm', 'per-kg': 'perKg', 'min-fare': 'minFare',
  'road-factor': 'roadFactor', 'max-distance-km': 'maxDistanceKm', 'cancel-free-window-s': 'cancelFreeWindowS', 'cancellation-fee-percent': 'cancellationFeePercent',
  'bike-speed-kmh': 'bikeSpeedKmh', 'car-speed-kmh': 'carSpeedKmh', 'bus-van-speed-kmh': 'busVanSpeedKmh', 'truck-speed-kmh': 'truckSpeedKmh',
} as const

type RatesChange = Partial<Record<keyof PlatformRates, number>>

/** Rates for distance pricing, in major units like every amount the operator types. */
export function ratesInForce(rates: PlatformRates, currency: string) {
  return {
    base_fare: toMajor(rates.baseFare),
    per_km: toMajor(rates.perKm),
    per_kg: toMajor(rates.perKg),
    min_fare: toMajor(rates.minFare),
    road_factor: rates.roadFactor,
    max_distance_km: rates.maxDistanceKm,
    cancel_free_window_s: rates.cancelFreeWindowS,
    cancellation_fee_percent: rates.cancellationFeePercent,
    bike_speed_kmh: rates.bikeSpeedKmh,
    car_speed_kmh: rates.carSpeedKmh,
    bus_van_speed_kmh: rates.busVanSpeedKmh,
    truck_speed_kmh: rates.truckSpeedKmh,
    currency,
  }
}

function readChange(flags: Flags): RatesChange {
  // Major units, as changePlatformRates takes them.
  const change: RatesChange = {}
  for (const [flag, field] of Object.entries(RATE_FLAGS)) {
    if (flags[flag] === undefined) continue
    const typed = requiredText(flags, flag)
    const rate = readPlatformRate(field, typed)
    if (rate.kind === 'invalid') throw new OperatorInputError(`--${flag} ${rate.problem}, got '${typed}'`)
    change[field] = rate.value
  }
  return change
}

/** `platform-rates:set`: changes only the rates named; with no flags it shows them. */
export const platformRatesSet = defineCommand({
  options: Object.fromEntries(Object.keys(RATE_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
  prepare(flags) {
    return readChange(flags)
  },
  async run({ sql, config, announce, actor }, change) {
    if (Object.keys(change).length === 0) return ratesInForce(await getPlatformRates(sql), config.CURRENCY)
    // prepare read every flag by the bounds changePlatformRates checks again: it has nothing left to refuse.
    const rates = await changePlatformRates(sql, change, { actor })
    await announce({ kind: 'platform-rates' })
    return ratesInForce(rates, config.CURRENCY)
  },
})
