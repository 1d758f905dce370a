import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { changePlatformRates } from '../../../shared/pricing/platform-rates.js'
import { hasAtMostTwoDecimals, toMajor } from '../../../shared/money.js'
import { PlatformRatesError } from '../../../shared/errors/platform-rates-error.js'
import type { PlatformRates } from '../../../shared/courier.js'
import { defineCommand, type Flags } from '../command.js'
import { amountInKobo, optionalNumber } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

const MONEY_FLAGS = { 'base-fare': 'baseFare', 'per-km': 'perKm', 'per-kg': 'perKg', 'min-fare': 'minFare' } as const

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
    currency,
  }
}

function readChange(flags: Flags): RatesChange {
  // Major units, as changePlatformRates takes them.
  const change: RatesChange = {}
  for (const [flag, field] of Object.entries(MONEY_FLAGS)) {
    // Parsed through kobo so "12.345" is refused the way a wallet amount is.
    if (flags[flag] !== undefined) change[field] = toMajor(amountInKobo(flags, flag, { allowZero: true }))
  }
  const roadFactor = optionalNumber(flags, 'road-factor', 1, 10)
  if (roadFactor !== null) change.roadFactor = roadFactor
  const maxDistanceKm = optionalNumber(flags, 'max-distance-km', 0.01, 20_000)
  if (maxDistanceKm !== null) change.maxDistanceKm = maxDistanceKm
  const window = optionalNumber(flags, 'cancel-free-window-s', 0, 86_400)
  if (window !== null) {
    if (!Number.isInteger(window)) throw new OperatorInputError(`--cancel-free-window-s must be a whole number of seconds, got '${flags['cancel-free-window-s']}'`)
    change.cancelFreeWindowS = window
  }
  const feePercent = optionalNumber(flags, 'cancellation-fee-percent', 0, 100)
  if (feePercent !== null) {
    if (!hasAtMostTwoDecimals(feePercent)) throw new OperatorInputError(`--cancellation-fee-percent must have at most 2 decimals, got '${flags['cancellation-fee-percent']}'`)
    change.cancellationFeePercent = feePercent
  }
  return change
}

/** `platform-rates:set`: changes only the rates named; with no flags it shows them. */
export const platformRatesSet = defineCommand({
  options: {
    'base-fare': { type: 'string' },
    'per-km': { type: 'string' },
    'per-kg': { type: 'string' },
    'min-fare': { type: 'string' },
    'road-factor': { type: 'string' },
    'max-distance-km': { type: 'string' },
    'cancel-free-window-s': { type: 'string' },
    'cancellation-fee-percent': { type: 'string' },
  },
  prepare(flags) {
    return readChange(flags)
  },
  async run({ sql, config, announce, actor }, change) {
    if (Object.keys(change).length === 0) return ratesInForce(await getPlatformRates(sql), config.CURRENCY)
    let rates: PlatformRates
    try {
      rates = await changePlatformRates(sql, change, { actor })
    } catch (err) {
      if (err instanceof PlatformRatesError) throw new OperatorInputError(err.message)
      throw err
    }
    await announce({ kind: 'platform-rates' })
    return ratesInForce(rates, config.CURRENCY)
  },
})
