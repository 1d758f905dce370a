import type { PlatformRates } from '../courier.js'
import { insertAudit } from '../db/audit.js'
import { lockPlatformRates, savePlatformRates } from '../db/platform-rates.js'
import type { Sql } from '../db/sql.js'
import { PlatformRatesError } from '../errors/platform-rates-error.js'
import { hasAtMostTwoDecimals, toMinor } from '../money.js'

/** A change as the operator types it: money in major units, the road factor as a plain ratio, the limit in km. */
export type PlatformRatesChange = Partial<PlatformRates>

/**
 * Changes only the rates named and returns the rates now in force (kobo). Throws
 * `PlatformRatesError`, writing nothing, for negative money, more than 2 decimals, a road
 * factor below 1, a distance limit that is not positive, or a cancellation window or fee out of range.
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
  if (change.cancelFreeWindowS !== undefined) {
    if (!Number.isInteger(change.cancelFreeWindowS) || change.cancelFreeWindowS < 0 || change.cancelFreeWindowS > 86_400) throw new PlatformRatesError('cancelFreeWindowS must be a whole number of seconds from 0 to 86400')
    inKobo.cancelFreeWindowS = change.cancelFreeWindowS
  }
  if (change.cancellationFeePercent !== undefined) {
    const percent = change.cancellationFeePercent
    if (!(percent >= 0 && percent <= 100) || !hasAtMostTwoDecimals(percent)) throw new PlatformRatesError('cancellationFeePercent must be from 0 to 100 with at most 2 decimals')
    inKobo.cancellationFeePercent = percent
  }
  return inKobo
}
