import { z } from 'zod'
import { ApiError } from '../../shared/errors/api-error.js'
import { parseJsonAs } from '../../shared/parse-json.js'
import { isStorableTime } from '../../shared/schemas/fields.js'

// The query strings of the list routes (docs/contracts.md section 6): every refusal is a 400
// naming the parameter, and no value costs more than one pass over a short string.

const MAX_VALUE_LENGTH = 512

/**
 * The query as one string per known parameter. A parameter not in `allowed`, or given twice,
 * is refused here, so a typo such as `?stauts=` is never silently ignored.
 */
export function readQuery<const K extends string>(raw: unknown, allowed: readonly K[]): Partial<Record<K, string>> {
  const given = new Map(Object.entries(raw !== null && typeof raw === 'object' ? raw : {}))
  for (const [name, value] of given) {
    if (!isOneOf(name, allowed)) throw new ApiError(400, `unknown query parameter '${name.slice(0, 64)}'`)
    if (typeof value !== 'string') throw new ApiError(400, `${name} must be given once`)
    if (value.length > MAX_VALUE_LENGTH) throw new ApiError(400, `${name} must be shorter than or equal to ${MAX_VALUE_LENGTH} characters`)
  }
  const query: Partial<Record<K, string>> = {}
  for (const name of allowed) {
    const value = given.get(name)
    if (typeof value === 'string') query[name] = value
  }
  return query
}

const INTEGER = /^(0|[1-9][0-9]{0,15})$/

/** A whole number from `min` to `max`, written plainly (no sign, exponent or leading zero). */
export function integerParam(name: string, value: string | undefined, bounds: { min: number; max: number; fallback: number }): number {
  if (value === undefined) return bounds.fallback
  const parsed = INTEGER.test(value) ? Number(value) : NaN
  if (!(parsed >= bounds.min && parsed <= bounds.max)) throw new ApiError(400, `${name} must be an integer from ${bounds.min} to ${bounds.max}`)
  return parsed
}

export function limitParam(value: string | undefined): number {
  return integerParam('limit', value, { min: 1, max: 100, fallback: 20 })
}

const isoDateTime = z.union([z.iso.datetime({ offset: true }), z.iso.date()])

/** An ISO 8601 date-time with its offset (`2026-11-22T10:00:00Z`), or a date, read as midnight UTC. */
export function dateParam(name: string, value: string | undefined): Date | null {
  if (value === undefined) return null
  if (!isoDateTime.safeParse(value).success) throw new ApiError(400, `${name} must be an ISO 8601 date-time`)
  const date = new Date(value)
  if (!isStorableTime(date.getTime())) throw new ApiError(400, `${name} must be between 0001-01-01 and 9999-12-31`)
  return date
}

/** One value of `allowed`, or a comma list of them; repeats are kept once. */
export function enumListParam<const T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T[] | null {
  if (value === undefined) return null
  const values = new Set<T>()
  for (const item of value.split(',')) {
    const trimmed = item.trim()
    if (!isOneOf(trimmed, allowed)) throw new ApiError(400, `${name} must be one of ${allowed.join(', ')}`)
    values.add(trimmed)
  }
  return [...values]
}

function isOneOf<const T extends string>(value: string, allowed: readonly T[]): value is T {
  return allowed.some((item) => item === value)
}

/**
 * Opaque page cursors: the position of the last item of a page, as base64url JSON. Decoding
 * checks the shape with `schema`, so a cursor edited by hand is a 400, never a query error.
 */
export function encodeCursor(position: unknown): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

export function decodeCursor<S extends z.ZodType>(value: string | undefined, schema: S): z.infer<S> | null {
  if (value === undefined) return null
  const decoded = parseJsonAs(schema, Buffer.from(value, 'base64url').toString('utf8'))
  if (decoded === null) throw new ApiError(400, 'cursor is not valid')
  return decoded
}

/**
 * A page of a keyset list read with `limit + 1` rows: the extra row only says whether there is
 * more, and the cursor is the position of the last row shown.
 */
export function keysetPage<R, T>(rows: R[], limit: number, show: (row: R) => T, position: (row: R) => unknown) {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const hasMore = rows.length > limit
  return { data: page.map(show), has_more: hasMore, next_cursor: hasMore && last ? encodeCursor(position(last)) : null }
}
