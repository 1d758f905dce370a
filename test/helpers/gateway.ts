import type { LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import type { Test } from 'tap'
import { invalidationChannel } from '../../shared/invalidation.js'
import { seedAccount } from './accounts.js'
import { waitForValue } from './processes.js'
import { IKEJA, ISLAND } from './shipments.js'
import { bearer, startStack } from './stack.js'

export const QUOTE = '/v2/business/order/cost'
export const PLACE = '/v2/business/order'
export const CATALOG = '/v2/business/rate-cards'
export const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

export type Point = { lat: number; lng: number }

// An error body's timestamp: milliseconds always, UTC (DESIGN 2).
const ERROR_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
// Fields an error body may carry beyond the spec's four and the request id.
const ERROR_EXTRAS = new Set(['errors', 'required', 'available', 'currency', 'placement_id'])

/** Throws, with the response attached, unless it is a well-formed error body for a request to `path`. */
export function checkErrorBody(response: LightMyRequestResponse, path: string): void {
  const fail = (why: string) => { throw new Error(`${why}: ${response.statusCode} ${response.body.slice(0, 500)}`) }
  let body: Record<string, unknown>
  try {
    body = response.json()
  } catch {
    return fail('error body is not JSON')
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) fail('error body is not an object')
  if (body.statusCode !== response.statusCode) fail('statusCode differs from the HTTP status')
  if (typeof body.timestamp !== 'string' || !ERROR_TIMESTAMP.test(body.timestamp) || Number.isNaN(Date.parse(body.timestamp))) fail('timestamp is not ISO 8601 UTC')
  if (body.path !== path) fail('path is not the request path')
  if (typeof body.message !== 'string' || body.message.length === 0) fail('message is not a non-empty string')
  if (body.request_id !== response.headers['x-request-id']) fail('request_id differs from x-request-id')
  for (const key of Object.keys(body)) {
    if (!['statusCode', 'timestamp', 'path', 'message', 'request_id'].includes(key) && !ERROR_EXTRAS.has(key)) fail(`unexpected field ${key}`)
  }
  if (body.errors !== undefined) {
    if (!Array.isArray(body.errors) || body.errors.length === 0) fail('errors is not a non-empty list')
    for (const item of body.errors as Record<string, unknown>[]) {
      if (typeof item?.message !== 'string') fail('an errors entry has no message')
      if (item.index !== undefined && !Number.isInteger(item.index)) fail('an errors entry has a non-integer index')
      if (item.field !== undefined && typeof item.field !== 'string') fail('an errors entry has a non-string field')
    }
    // A validation 400 leads with its first violation; a failed batch names the shipments in `errors`.
    const batchFailed = body.message === 'One or more orders could not be placed' && response.statusCode === 400 && path === PLACE
    if (!batchFailed && (body.errors as { message: string }[])[0].message !== body.message) fail('message is not the first of errors')
  }
}


export function ends(pickup: Point, dropoff: Point) {
  return { pickup_latitude: pickup.lat, pickup_longitude: pickup.lng, dropoff_latitude: dropoff.lat, dropoff_longitude: dropoff.lng }
}

/** Island to Ikeja by coordinates, a bike parcel of 2 kg: valid for any account with the demo card. */
export function quoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { pickup_address: 'Broad Street, Lagos Island', dropoff_address: 'Allen Avenue, Ikeja', weight: 2, vehicle_type: 'bike', ...ends(ISLAND, IKEJA), ...overrides }
}

// Computed here, not with the service's own helpers, so a wrong radius or factor there shows.
function haversineKm(a: Point, b: Point): number {
  const R = 6371.0088
  const rad = (d: number) => (d * Math.PI) / 180
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2
  return 2 * R * Math.asin(Math.sqrt(h))
}
const round2 = (value: number) => Math.round(value * 100 + 1e-9) / 100
export const expectedKm = (a: Point, b: Point) => round2(haversineKm(a, b) * 1.3)
/** max(1000, 500 + 120 × km + 50 × kg), in kobo so no float rounding creeps in (km and kg have 2 decimals). */
export function distancePrice(km: number, kg: number): number {
  const kobo = 50000 + 120 * Math.round(km * 100) + 50 * Math.round(kg * 100)
  return Math.max(100000, kobo) / 100
}

export interface ExpectedError {
  status: number
  path: string
  message: string
  /** The full list, or 'listed' to require only that the first entry carries `message`. */
  errors?: { index?: number; field?: string; message: string }[] | 'listed'
  /** Fields a refusal carries beside the spec's four, such as `placement_id`. */
  extra?: Record<string, unknown>
}

/** The whole error body, field by field: nothing missing, nothing extra. */
export function assertError(t: Test, response: LightMyRequestResponse, expected: ExpectedError) {
  t.equal(response.statusCode, expected.status, `${expected.status} for ${expected.message}: ${response.body}`)
  const body = response.json()
  t.match(body.timestamp, ISO_UTC, 'timestamp is ISO 8601 UTC')
  // The body's content, not a timing: the spec's timestamp is the time of the answer.
  t.ok(Math.abs(Date.parse(body.timestamp) - Date.now()) < 60_000, 'timestamp is now')
  const requestId = response.headers['x-request-id']
  t.ok(typeof requestId === 'string' && requestId.length > 0, 'x-request-id header is set')
  const errors = expected.errors === 'listed' ? body.errors : expected.errors
  if (expected.errors === 'listed') t.equal(body.errors?.[0]?.message, expected.message, 'errors lists the first violation first')
  t.strictSame(body, {
    statusCode: expected.status,
    timestamp: body.timestamp,
    path: expected.path,
    message: expected.message,
    request_id: requestId,
    ...(errors !== undefined && { errors }),
    ...expected.extra,
  })
}

/**
 * One gateway test file's world: the stack without a worker, a publisher for invalidations, and
 * three accounts (demo card and funds; no card; a read-only key).
 */
export async function startGateway(t: Test) {
  const { gateway, db } = await startStack(t, { worker: false })
  const { sql } = db
  const publisher = new Redis(db.config.REDIS_URL)
  t.teardown(() => publisher.quit())
  // Both the gateway and pricing listen for invalidations; a message published before they
  // subscribe would be lost and the invalidation checks would test nothing.
  const channel = invalidationChannel(db.config.QUEUE_PREFIX)
  const subscribed = await waitForValue(async () => ((await publisher.pubsub('NUMSUB', channel)) as [string, number])[1], (count) => count >= 2, 10_000)
  t.ok(subscribed.held, `gateway and pricing subscribe to invalidations (${subscribed.value} subscribers)`)

  const account = await seedAccount(sql, { balance: 100000 })
  const bare = await seedAccount(sql, { card: null, name: 'No Card Ltd' })
  const reader = await seedAccount(sql, { scopes: ['orders:read'], name: 'Read Only Ltd' })

  const quote = (apiKey: string | null, body: unknown, headers: Record<string, string> = {}) =>
    gateway.inject({ method: 'POST', url: QUOTE, headers: { ...(apiKey && bearer(apiKey)), ...headers }, payload: body as never })
  const catalog = (apiKey: string | null, url = CATALOG) => gateway.inject({ method: 'GET', url, headers: apiKey ? bearer(apiKey) : {} })
  return { gateway, db, sql, publisher, account, bare, reader, quote, catalog }
}
