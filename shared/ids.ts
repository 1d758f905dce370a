import { randomBytes, randomInt, randomUUID } from 'node:crypto'

// The one place that knows what our ids look like, so a route, a repository and the CLI agree.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Crockford base32: no I, L, O or U, so an id read aloud or copied by hand stays unambiguous. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** Checked before a query so a malformed id is "not found", never a Postgres cast error. */
export function isUuid(value: string): boolean {
  return UUID.test(value)
}

/** `length` Crockford characters from a CSPRNG; 256 is a multiple of 32, so `byte % 32` is unbiased. */
export function crockfordRandom(length: number): string {
  return Array.from(randomBytes(length), (byte) => CROCKFORD[byte % 32]).join('')
}

/** `ORD-` and 10 Crockford base32 characters (50 random bits). */
export function newOrderId(): string {
  return `ORD-${crockfordRandom(10)}`
}

/** `opt_` and 12 Crockford base32 characters (60 random bits). */
export function newOptionId(): string {
  return `opt_${crockfordRandom(12)}`
}

/** A row id for the tables keyed by UUID (businesses, api keys, rate cards and their versions). */
export function newUuid(): string {
  return randomUUID()
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `ck_live_` + 32 base62 characters; randomInt avoids the modulo bias of bytes % 62. */
export function newApiKey(): string {
  let secret = ''
  for (let i = 0; i < 32; i++) secret += BASE62[randomInt(BASE62.length)]
  return `ck_live_${secret}`
}
