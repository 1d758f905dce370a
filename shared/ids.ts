import { randomBytes, randomFillSync, randomInt, randomUUID } from 'node:crypto'

// The one place that knows what our ids look like, so a route, a repository and the CLI agree.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Crockford base32: no I, L, O or U, so an id read aloud or copied by hand stays unambiguous. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

/** Checked before a query so a malformed id is "not found", never a Postgres cast error. */
export function isUuid(value: string): boolean {
  return UUID.test(value)
}

// CSPRNG bytes drawn 4 KB at a time, each byte handed out once: a placement of 100 shipments
// needs 200 ids and 100 tracking tokens, a quote one id, and a randomBytes call per value is a
// visible share of the worker's and the pricing service's CPU under load (docs/performance.md).
// Node's randomUUID keeps a pool the same way.
const pool = Buffer.alloc(4096)
let poolOffset = pool.length

/** `length` Crockford characters from a CSPRNG; 256 is a multiple of 32, so `byte % 32` is unbiased. */
export function crockfordRandom(length: number): string {
  const start = drawFromPool(length)
  let id = ''
  for (let i = start; i < start + length; i++) id += CROCKFORD[pool[i]! % 32]
  return id
}

/** Where `length` fresh bytes of the pool start; they are never handed out again. */
function drawFromPool(length: number): number {
  if (poolOffset + length > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  const start = poolOffset
  poolOffset += length
  return start
}

/** `ORD-` and 10 Crockford base32 characters (50 random bits). */
export function newOrderId(): string {
  return `ORD-${crockfordRandom(10)}`
}

const ORDER_ID = /^ORD-[0-9A-HJKMNP-TV-Z]{10}$/
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{20}$/

/** Checked before a query, so anything else is "not found" without one. */
export function isOrderId(value: string): boolean {
  return ORDER_ID.test(value)
}

export function isEventId(value: string): boolean {
  return EVENT_ID.test(value)
}

/** `evt_` and 20 Crockford base32 characters (100 random bits): events outnumber orders. */
export function newEventId(): string {
  return `evt_${crockfordRandom(20)}`
}

/**
 * A ledger entry's public id: `txn_`, its wallet's random name and its number in that wallet.
 * Unique across the platform, and it says nothing of any other wallet's entries (migration 00036).
 */
export function transactionId(ledgerName: string, seq: number): string {
  return `txn_${ledgerName}_${seq}`
}

/** `qt_` and 16 Crockford base32 characters (80 random bits): a quote's id is its only secret-free handle. */
export function newQuoteId(): string {
  return `qt_${crockfordRandom(16)}`
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

/** 32 base62 characters (190 random bits); randomInt avoids the modulo bias of bytes % 62. */
function base62Secret(): string {
  let secret = ''
  for (let i = 0; i < 32; i++) secret += BASE62[randomInt(BASE62.length)]
  return secret
}

/** `ck_live_` (or the sandbox's `ck_test_`) + 32 base62 characters. */
export function newApiKey(livemode = true): string {
  return `${livemode ? 'ck_live_' : 'ck_test_'}${base62Secret()}`
}

/** A courier's Bearer token (DESIGN 14): `cc_live_` + 32 base62 characters. */
export function newCourierToken(): string {
  return `cc_live_${base62Secret()}`
}

const OFFER_ID = /^off_[0-9A-HJKMNP-TV-Z]{16}$/

/** `off_` and 16 Crockford base32 characters (80 random bits). */
export function newOfferId(): string {
  return `off_${crockfordRandom(16)}`
}

export function isOfferId(value: string): boolean {
  return OFFER_ID.test(value)
}

const WEBHOOK_ENDPOINT_ID = /^we_[0-9A-HJKMNP-TV-Z]{16}$/

/** `we_` and 16 Crockford base32 characters (80 random bits). */
export function newWebhookEndpointId(): string {
  return `we_${crockfordRandom(16)}`
}

export function isWebhookEndpointId(value: string): boolean {
  return WEBHOOK_ENDPOINT_ID.test(value)
}

/** `whsec_` and the base64 of 32 random bytes: the Standard Webhooks form of an HMAC key. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** A delivery PIN: 4 digits, any of the 10 000 equally likely. */
export function newDeliveryPin(): string {
  return String(randomInt(0, 10_000)).padStart(4, '0')
}

/** A tracking page's token: 128 random bits, URL-safe (22 characters). */
export function newTrackingToken(): string {
  const start = drawFromPool(16)
  return pool.toString('base64url', start, start + 16)
}
