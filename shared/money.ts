/**
 * Money is held as integer minor units (kobo). These helpers are the only place that converts
 * between the API's major-unit numbers and the stored integers.
 */

/** Rounds half away from zero, the rule for every money and distance figure in this service. */
export function roundHalfAwayFromZero(value: number, decimals = 0): number {
  const factor = 10 ** decimals
  const scaled = Math.abs(value) * factor
  const whole = Math.floor(scaled)
  // The tolerance absorbs binary noise such as 1.005 * 100 = 100.49999999999999.
  const rounded = scaled - whole >= 0.5 - 1e-9 ? whole + 1 : whole
  return value < 0 ? -rounded / factor : rounded / factor
}

/** Major units with at most two decimals → integer minor units. */
export function toMinor(major: number): number {
  return roundHalfAwayFromZero(major * 100)
}

/**
 * The largest amount, in kobo, whose naira value a JSON number still shows exactly to the kobo
 * (ten trillion naira): past it, `minor / 100` and back is no longer the same integer.
 */
export const MAX_EXACT_KOBO = 1e15

/** Integer minor units → major units as a JSON number (`150000` → `1500`, `151250` → `1512.5`). */
export function toMajor(minor: number): number {
  return minor / 100
}

/** True when a major-unit amount has no more than two decimals. */
export function hasAtMostTwoDecimals(major: number): boolean {
  return Number.isFinite(major) && Math.abs(toMinor(major) - major * 100) < 1e-6
}

// Digits with up to two decimals: no sign, no exponent, so "-5" and "1e3" never slip through.
const MAJOR_AMOUNT = /^\d+(\.\d{1,2})?$/
/** Keeps kobo far inside 2^53, where bigint columns are read as plain numbers. */
export const MAX_AMOUNT_MAJOR = 1_000_000_000

export type AmountReading = { kind: 'ok'; kobo: number } | { kind: 'invalid'; problem: 'form' | 'too_large' }

/**
 * An amount an operator typed (CLI flag or console form), in major units, read to kobo: plain
 * digits with at most two decimals, above zero unless `allowZero` (rates, never credits).
 */
export function readMajorAmount(text: string, { allowZero = false } = {}): AmountReading {
  const value = text.trim()
  if (!MAJOR_AMOUNT.test(value)) return { kind: 'invalid', problem: 'form' }
  const major = Number(value)
  if (!allowZero && major === 0) return { kind: 'invalid', problem: 'form' }
  if (major > MAX_AMOUNT_MAJOR) return { kind: 'invalid', problem: 'too_large' }
  return { kind: 'ok', kobo: toMinor(major) }
}
