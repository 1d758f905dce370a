import { z } from 'zod'
import { ApiError } from '../../shared/errors/api-error.js'
import { parseJsonAs } from '../../shared/parse-json.js'
import { isOneOf, readEnumList, readInteger, readTime, type FilterReading } from '../../shared/schemas/list-query.js'

// The query strings of the list routes (docs/contracts.md section 6): every refusal is a 400
// naming the parameter. The values' rules are shared with the console's lists (shared/schemas/list-query.ts).

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

// Each parameter is read by the shared rule: absent, it is the fallback; refused, a 400 with the rule's words.

export function integerParam(name: string, value: string | undefined, bounds: { min: number; max: number; fallback: number }): number {
  return value === undefined ? bounds.fallback : valueOf(readInteger(name, value, bounds))
}

export function limitParam(value: string | undefined): number {
  return integerParam('limit', value, { min: 1, max: 100, fallback: 20 })
}

export function dateParam(name: string, value: string | undefined): Date | null {
  return value === undefined ? null : valueOf(readTime(name, value))
}

export function enumListParam<const T extends string>(name: string, value: string | undefined, allowed: readonly T[]): T[] | null {
  return value === undefined ? null : valueOf(readEnumList(name, value, allowed))
}

function valueOf<T>(reading: FilterReading<T>): T {
  if (reading.kind === 'refused') throw new ApiError(400, reading.message)
  return reading.value
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
