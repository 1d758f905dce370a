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
 * How a list's cursor is written and read: base64url JSON by default; sealed (encrypted and
 * authenticated) where the position would tell a caller more than its own data (a row number
 * every business's rows share).
 */
export interface CursorCodec {
  encode(json: string): string
  /** The JSON again, or null when the value is not a cursor this codec wrote. */
  decode(value: string): string | null
}

const plainCursors: CursorCodec = {
  encode: (json) => Buffer.from(json).toString('base64url'),
  decode: (value) => Buffer.from(value, 'base64url').toString('utf8'),
}

/**
 * Opaque page cursors: the position of the last item of a page. Decoding checks the shape with
 * `schema`, so a cursor edited by hand is a 400, never a query error.
 */
export function encodeCursor(position: unknown, codec: CursorCodec = plainCursors): string {
  return codec.encode(JSON.stringify(position))
}

export function decodeCursor<S extends z.ZodType>(value: string | undefined, schema: S, codec: CursorCodec = plainCursors): z.infer<S> | null {
  if (value === undefined) return null
  const json = codec.decode(value)
  const decoded = json === null ? null : parseJsonAs(schema, json)
  if (decoded === null) throw new ApiError(400, 'cursor is not valid')
  return decoded
}

/**
 * A page of a keyset list read with `limit + 1` rows: the extra row only says whether there is
 * more, and the cursor is the position of the last row shown.
 */
export function keysetPage<R, T>(rows: R[], limit: number, show: (row: R) => T, position: (row: R) => unknown, codec: CursorCodec = plainCursors) {
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  const hasMore = rows.length > limit
  return { data: page.map(show), has_more: hasMore, next_cursor: hasMore && last ? encodeCursor(position(last), codec) : null }
}
