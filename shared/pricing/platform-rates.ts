import type { PlatformRates } from '../courier.js'
import { insertAudit } from '../db/audit.js'
import { lockPlatformRates, savePlatformRates } from '../db/platform-rates.js'
import type { Sql } from '../db/sql.js'
import { PlatformRatesError } from '../errors/platform-rates-error.js'
import { hasAtMostTwoDecimals, readMajorAmount, toMajor, toMinor } from '../money.js'

/** A change as the operator types it: money in major units, the road factor as a plain ratio, the limit in km. */
export type PlatformRatesChange = Partial<PlatformRates>

/** The rates that are money: kobo in `PlatformRates`, major units in a change. */
export const MONEY_RATES: ReadonlySet<string> = new Set<keyof PlatformRates>(['baseFare', 'perKm', 'perKg', 'minFare'])

/** No fare, per-km or per-kg rate is above this (naira): far over any real price, far inside the bigint columns and the price arithmetic. */
export const MAX_FARE_MAJOR = 1_000_000

// The bounds every amount of the fare shares.
const AMOUNT = { min: 0, max: MAX_FARE_MAJOR, rule: `a non-negative amount up to ${MAX_FARE_MAJOR} with at most 2 decimals` }
// An ETA's speed, for every vehicle: a rider in Lagos traffic averages well under 25 km/h, a clear road rarely 120.
const ETA_SPEED = { min: 5, max: 120, rule: 'a speed from 5 to 120 km/h' }

/**
 * What an operator may set each rate to, from the CLI or the console. Distance pricing is
 * `max(min_fare, base_fare + per_km × km + per_kg × kg)` with km = straight line × road factor:
 * roads are never shorter than the straight line and rarely three times longer (a detour round a
 * lagoon), local delivery stays under the 2 000 km that cross Nigeria by road, a free window is at
 * most a day, and a fee at most the whole price.
 */
export const PLATFORM_RATE_LIMITS: Record<keyof PlatformRates, { min: number; max: number; rule: string }> = {
  baseFare: AMOUNT,
  perKm: AMOUNT,
  perKg: AMOUNT,
  minFare: AMOUNT,
  roadFactor: { min: 1, max: 3, rule: 'a number from 1 to 3' },
  maxDistanceKm: { min: 1, max: 2000, rule: 'a number of km from 1 to 2000' },
  cancelFreeWindowS: { min: 0, max: 86_400, rule: 'a whole number of seconds from 0 to 86400' },
  cancellationFeePercent: { min: 0, max: 100, rule: 'a number from 0 to 100 with at most 2 decimals' },
  bikeSpeedKmh: ETA_SPEED,
  carSpeedKmh: ETA_SPEED,
  busVanSpeedKmh: ETA_SPEED,
  truckSpeedKmh: ETA_SPEED,
}

const isRate = (name: string): name is keyof PlatformRates => Object.hasOwn(PLATFORM_RATE_LIMITS, name)

/** What is wrong with a rate (money in major units), in words that follow its name (`must be …`), or null when it may be set. */
export function platformRateProblem(field: keyof PlatformRates, value: number): string | null {
  const { min, max, rule } = PLATFORM_RATE_LIMITS[field]
  const fits = Number.isFinite(value) && value >= min && value <= max
    && (field !== 'cancelFreeWindowS' || Number.isInteger(value))
    && (!(MONEY_RATES.has(field) || field === 'cancellationFeePercent') || hasAtMostTwoDecimals(value))
  return fits ? null : `must be ${rule}`
}

export type RateReading = { kind: 'ok'; value: number } | { kind: 'invalid'; problem: string }

/**
 * A rate as an operator typed it (a CLI flag, a console field), read to the number a change
 * takes: money like every amount typed (digits, at most 2 decimals, no sign or exponent), the
 * rest as plain numbers, each within its limits.
 */
export function readPlatformRate(field: keyof PlatformRates, typed: string): RateReading {
  const text = typed.trim()
  const value = MONEY_RATES.has(field) ? moneyOf(text) : text === '' ? Number.NaN : Number(text)
  const problem = platformRateProblem(field, value)
  return problem === null ? { kind: 'ok', value } : { kind: 'invalid', problem }
}

function moneyOf(text: string): number {
  const amount = readMajorAmount(text, { allowZero: true })
  return amount.kind === 'ok' ? toMajor(amount.kobo) : Number.NaN
}

/**
 * Changes only the rates named and returns the rates now in force (kobo). Throws
 * `PlatformRatesError`, writing nothing, for a rate outside `PLATFORM_RATE_LIMITS`.
 * `audit` names the operator whose change goes on the audit trail.
 */
export async function changePlatformRates(sql: Sql, change: PlatformRatesChange, audit: { actor: string } | null = null): Promise<PlatformRates> {
  const inKobo = checkedChange(change)
  return sql.begin(async (tx) => {
    const before = await lockPlatformRates(tx)
    const next = { ...before, ...inKobo }
    await savePlatformRates(tx, next)
    // An operator's change (CLI or console) is on the audit trail, in kobo as stored.
    if (audit) await insertAudit(tx, { actor: audit.actor, action: 'platform-rates.set', businessId: null, subject: 'platform rates', before, after: next })
    return next
  })
}

function checkedChange(change: PlatformRatesChange): Partial<PlatformRates> {
  const inKobo: Partial<PlatformRates> = {}
  for (const [field, value] of Object.entries(change)) {
    if (!isRate(field) || value === undefined) continue
    const problem = platformRateProblem(field, value)
    if (problem !== null) throw new PlatformRatesError(field, problem)
    inKobo[field] = MONEY_RATES.has(field) ? toMinor(value) : value
  }
  return inKobo
}
