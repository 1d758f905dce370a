import { z } from 'zod'
import { isStorableTime } from './fields.js'

/*
 * The values of the list filters (docs/contracts.md section 6), read by one set of rules for the
 * API's query strings (services/gateway/query.ts) and the console's filter forms
 * (services/console/order-list.ts). A refusal's message starts with the parameter's name; no
 * value costs more than one pass over a short string.
 */

/** A filter value as read, or why it cannot be: each caller answers the refusal with its own 400. */
export type FilterReading<T> = { kind: 'read'; value: T } | { kind: 'refused'; message: string }

const read = <T>(value: T): FilterReading<T> => ({ kind: 'read', value })
const refused = (message: string): FilterReading<never> => ({ kind: 'refused', message })

const INTEGER = /^(0|[1-9][0-9]{0,15})$/

/** A whole number from `min` to `max`, written plainly (no sign, exponent or leading zero). */
export function readInteger(name: string, value: string, bounds: { min: number; max: number }): FilterReading<number> {
  const parsed = INTEGER.test(value) ? Number(value) : NaN
  return parsed >= bounds.min && parsed <= bounds.max ? read(parsed) : refused(`${name} must be an integer from ${bounds.min} to ${bounds.max}`)
}

const withOffset = z.union([z.iso.datetime({ offset: true }), z.iso.date()])
const zoneless = z.iso.datetime({ local: true })

/**
 * An ISO 8601 date-time with its offset (`2026-11-22T10:00:00Z`), or a date, read as midnight UTC.
 * With `zonelessAsUtc`, also a date-time without one (`2026-11-22T10:00`, what a datetime-local
 * input sends), read as UTC: never as the server's own zone, which `new Date` would pick.
 */
export function readTime(name: string, value: string, { zonelessAsUtc = false } = {}): FilterReading<Date> {
  const date = withOffset.safeParse(value).success ? new Date(value)
    : zonelessAsUtc && zoneless.safeParse(value).success ? new Date(`${value}Z`) : null
  if (date === null) return refused(`${name} must be an ISO 8601 date-time`)
  return isStorableTime(date.getTime()) ? read(date) : refused(`${name} must be between 0001-01-01 and 9999-12-31`)
}

/** One value of `allowed`, or a comma list of them; repeats are kept once. */
export function readEnumList<const T extends string>(name: string, value: string, allowed: readonly T[]): FilterReading<T[]> {
  const values = new Set<T>()
  for (const item of value.split(',')) {
    const trimmed = item.trim()
    if (!isOneOf(trimmed, allowed)) return refused(`${name} must be one of ${allowed.join(', ')}`)
    values.add(trimmed)
  }
  return read([...values])
}

export function isOneOf<const T extends string>(value: string, allowed: readonly T[]): value is T {
  return allowed.some((item) => item === value)
}
