import { spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { LightMyRequestResponse } from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { hashApiKey, revokeApiKey } from '../../shared/db/api-keys.js'
import { importRateCard } from '../../shared/db/rate-cards.js'
import { invalidationChannel, publishInvalidation } from '../../shared/invalidation.js'
import { demoCardFile, seedAccount } from '../helpers/accounts.js'
import { bearer, startStack } from '../helpers/stack.js'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

const QUOTE = '/v2/business/order/cost'
const PLACE = '/v2/business/order'
const CATALOG = '/v2/business/rate-cards'
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/

// Points inside the demo card's zones (Island, Lekki, Mainland, Ikeja squares) and one far outside.
const ISLAND = { lat: 6.45, lng: 3.40 }
const IKEJA = { lat: 6.60, lng: 3.35 }
const LEKKI = { lat: 6.44, lng: 3.50 }
const KANO = { lat: 12.0, lng: 8.52 }

type Point = { lat: number; lng: number }

function ends(pickup: Point, dropoff: Point) {
  return { pickup_latitude: pickup.lat, pickup_longitude: pickup.lng, dropoff_latitude: dropoff.lat, dropoff_longitude: dropoff.lng }
}

/** Island to Ikeja by coordinates, a bike parcel of 2 kg: valid for any account with the demo card. */
function quoteBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { pickup_address: 'Broad Street, Lagos Island', dropoff_address: 'Allen Avenue, Ikeja', weight: 2, vehicle_type: 'bike', ...ends(ISLAND, IKEJA), ...overrides }
}

function shipment(overrides: Record<string, unknown> = {}) {
  return { dropoff_address: '5 Allen Avenue, Ikeja', dropoff_state: 'Lagos', recipient_name: 'Chidi Okafor', recipient_phone: '+2348020000000', item_name: 'Phone case', weight: 2, quantity: 1, vehicle_type: 'bike', ...ends(ISLAND, IKEJA), ...overrides }
}

// Computed here, not with the service's own helpers, so a wrong radius or factor there shows.
function haversineKm(a: Point, b: Point): number {
  const R = 6371.0088
  const rad = (d: number) => (d * Math.PI) / 180
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2
  return 2 * R * Math.asin(Math.sqrt(h))
}
const round2 = (value: number) => Math.round(value * 100 + 1e-9) / 100
const expectedKm = (a: Point, b: Point) => round2(haversineKm(a, b) * 1.3)
/** max(1000, 500 + 120 × km + 50 × kg), in kobo so no float rounding creeps in (km and kg have 2 decimals). */
function distancePrice(km: number, kg: number): number {
  const kobo = 50000 + 120 * Math.round(km * 100) + 50 * Math.round(kg * 100)
  return Math.max(100000, kobo) / 100
}

interface ExpectedError {
  status: number
  path: string
  message: string
  /** The full list, or 'listed' to require only that the first entry carries `message`. */
  errors?: { index?: number; field?: string; message: string }[] | 'listed'
}

/** The whole error body, field by field: nothing missing, nothing extra. */
function assertError(t: Test, response: LightMyRequestResponse, expected: ExpectedError) {
  t.equal(response.statusCode, expected.status, `${expected.status} for ${expected.message}: ${response.body}`)
  const body = response.json()
  t.match(body.timestamp, ISO_UTC, 'timestamp is ISO 8601 UTC')
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
  })
}

async function waitFor<T>(probe: () => Promise<T>, done: (value: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    value = await probe()
  }
  return value
}

t.test('gateway', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const { sql } = db
  const publisher = new Redis(db.config.REDIS_URL)
  t.teardown(() => publisher.quit())
  // Both the gateway and pricing listen for invalidations; a message published before they
  // subscribe would be lost and the 1 s checks below would test nothing.
  const channel = invalidationChannel(db.config.QUEUE_PREFIX)
  await waitFor(async () => ((await publisher.pubsub('NUMSUB', channel)) as [string, number])[1], (count) => count >= 2, 5000)

  const account = await seedAccount(sql, { balance: 100000 })
  const bare = await seedAccount(sql, { card: null, name: 'No Card Ltd' })
  const reader = await seedAccount(sql, { scopes: ['orders:read'], name: 'Read Only Ltd' })

  const quote = (apiKey: string | null, body: unknown, headers: Record<string, string> = {}) =>
    gateway.inject({ method: 'POST', url: QUOTE, headers: { ...(apiKey && bearer(apiKey)), ...headers }, payload: body as never })
  const catalog = (apiKey: string | null, url = CATALOG) => gateway.inject({ method: 'GET', url, headers: apiKey ? bearer(apiKey) : {} })

  t.test('401 Invalid API key', async (t) => {
    const unauthorized = { status: 401, message: 'Invalid API key' }
    assertError(t, await quote(null, quoteBody()), { ...unauthorized, path: QUOTE })
    assertError(t, await catalog(null), { ...unauthorized, path: CATALOG })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, payload: [shipment()] }), { ...unauthorized, path: PLACE })
    assertError(t, await quote(null, quoteBody(), { authorization: `Basic ${account.apiKey}` }), { ...unauthorized, path: QUOTE })
    assertError(t, await quote(null, quoteBody(), { authorization: account.apiKey }), { ...unauthorized, path: QUOTE })
    assertError(t, await quote(null, quoteBody(), { authorization: 'Bearer ' }), { ...unauthorized, path: QUOTE })
    assertError(t, await quote('ck_live_00000000000000000000000000000000', quoteBody()), { ...unauthorized, path: QUOTE })
    assertError(t, await quote(account.apiKey + 'x', quoteBody()), { ...unauthorized, path: QUOTE })
    assertError(t, await catalog(null, `${CATALOG}?page=2&key=${account.apiKey}`), { ...unauthorized, path: CATALOG })
  })

  t.test('the scheme word is case-insensitive', async (t) => {
    for (const scheme of ['Bearer', 'bearer', 'BEARER']) {
      const response = await quote(null, quoteBody(), { authorization: `${scheme} ${account.apiKey}` })
      t.equal(response.statusCode, 200, `${scheme}: ${response.body}`)
      t.equal(response.json().price, 3500)
    }
  })

  t.test('a revoked key is refused within 1 s', async (t) => {
    const victim = await seedAccount(sql, { name: 'Revoked Ltd' })
    // Used once first, so the key sits in the gateway's cache and only the invalidation can evict it.
    t.equal((await catalog(victim.apiKey)).statusCode, 200)
    const [{ id }] = await sql`select id from api_keys where key_hash = ${hashApiKey(victim.apiKey)}`
    const revoked = await revokeApiKey(sql, id)
    t.ok(revoked, 'the key existed')
    const publishedAt = Date.now()
    await publishInvalidation(publisher, db.config.QUEUE_PREFIX, { kind: 'api-key', keyHash: revoked!.keyHash })
    const response = await waitFor(() => catalog(victim.apiKey), (r) => r.statusCode === 401, 1000)
    t.ok(Date.now() - publishedAt <= 1100, 'refused within about a second')
    assertError(t, response, { status: 401, path: CATALOG, message: 'Invalid API key' })
    assertError(t, await quote(victim.apiKey, quoteBody()), { status: 401, path: QUOTE, message: 'Invalid API key' })
    t.equal((await catalog(account.apiKey)).statusCode, 200, 'other keys keep working')
  })

  t.test('403 Insufficient API key scope for a key with only orders:read', async (t) => {
    const forbidden = { status: 403, message: 'Insufficient API key scope' }
    assertError(t, await quote(reader.apiKey, quoteBody()), { ...forbidden, path: QUOTE })
    assertError(t, await catalog(reader.apiKey), { ...forbidden, path: CATALOG })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(reader.apiKey), payload: [shipment()] }), { ...forbidden, path: PLACE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: { ...bearer(reader.apiKey), 'content-type': 'text/plain' }, payload: 'nonsense' }), { ...forbidden, path: PLACE })
    const [{ count }] = await sql`select count(*)::int as count from placements where business_id = ${reader.businessId}`
    t.equal(count, 0, 'nothing was queued')
  })

  t.test('authentication comes before the body', async (t) => {
    const json = { 'content-type': 'application/json' }
    const unauthorized = { status: 401, message: 'Invalid API key' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: '{"weight": ' }), { ...unauthorized, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: '[{' }), { ...unauthorized, path: PLACE })
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { 'content-type': 'text/plain' }, payload: 'weight=2' }), { ...unauthorized, path: QUOTE })
    const oversize = JSON.stringify({ pickup_address: 'x'.repeat(2 * 1048576) })
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: oversize }), { ...unauthorized, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: oversize }), { ...unauthorized, path: PLACE })
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...json, authorization: 'Bearer ck_live_nope' }, payload: '{' }), { ...unauthorized, path: QUOTE })
  })

  t.test('body errors with a valid key: 400, 415, 413', async (t) => {
    const key = bearer(account.apiKey)
    const json = { ...key, 'content-type': 'application/json' }
    const malformed = { status: 400, message: 'Malformed JSON in request body' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: '{"weight": ' }), { ...malformed, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: `${QUOTE}?debug=1`, headers: json, payload: "{'weight': 2}" }), { ...malformed, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: '[{"weight": 2},]' }), { ...malformed, path: PLACE })

    const unsupported = { status: 415, message: 'Content-Type must be application/json' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': 'text/plain' }, payload: JSON.stringify(quoteBody()) }), { ...unsupported, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: { ...key, 'content-type': 'text/plain' }, payload: JSON.stringify([shipment()]) }), { ...unsupported, path: PLACE })
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'weight=2' }), { ...unsupported, path: QUOTE })

    // One byte over the limit: the padding makes the JSON exactly 1048577 bytes long.
    const base = JSON.stringify({ ...quoteBody(), pad: '' })
    const overBy1 = JSON.stringify({ ...quoteBody(), pad: 'x'.repeat(1048577 - Buffer.byteLength(base)) })
    t.equal(Buffer.byteLength(overBy1), 1048577)
    const tooLarge = { status: 413, message: 'Request body is larger than 1048576 bytes' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: overBy1 }), { ...tooLarge, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: `[${overBy1}]` }), { ...tooLarge, path: PLACE })
    // At the limit exactly, the body is read and reaches validation.
    const atLimit = JSON.stringify({ ...quoteBody(), pad: 'x'.repeat(1048576 - Buffer.byteLength(base)) })
    t.equal((await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: atLimit })).statusCode, 200, 'a body of exactly 1 MiB is accepted')
  })

  t.test('unknown routes are 404 whatever the key; health needs no key', async (t) => {
    for (const headers of [{}, bearer(account.apiKey), bearer('ck_live_unknown')]) {
      assertError(t, await gateway.inject({ method: 'GET', url: '/v2/nothing', headers }), { status: 404, path: '/v2/nothing', message: 'Cannot GET /v2/nothing' })
      assertError(t, await gateway.inject({ method: 'POST', url: '/v2/business/unknown?x=1', headers, payload: {} }), { status: 404, path: '/v2/business/unknown', message: 'Cannot POST /v2/business/unknown' })
    }
    assertError(t, await gateway.inject({ method: 'GET', url: QUOTE, headers: bearer(account.apiKey) }), { status: 404, path: QUOTE, message: `Cannot GET ${QUOTE}` })
    assertError(t, await gateway.inject({ method: 'POST', url: '/business/order/cost', headers: bearer(account.apiKey), payload: quoteBody() }), { status: 404, path: '/business/order/cost', message: 'Cannot POST /business/order/cost' })

    const health = await gateway.inject({ method: 'GET', url: '/healthz' })
    t.equal(health.statusCode, 200)
    t.strictSame(health.json(), { status: 'ok' })
    const ready = await gateway.inject({ method: 'GET', url: '/readyz' })
    t.equal(ready.statusCode, 200)
    t.strictSame(ready.json(), { status: 'ready', postgres: true, redis: true })
  })

  t.test('quote validation: class-validator wording, every violation listed', async (t) => {
    const invalid = async (body: unknown, message: string, errors: ExpectedError['errors'] = 'listed') =>
      assertError(t, await quote(account.apiKey, body), { status: 400, path: QUOTE, message, errors })

    await invalid(quoteBody({ weight: 0.05 }), 'weight must not be less than 0.1', [{ field: 'weight', message: 'weight must not be less than 0.1' }])
    await invalid(quoteBody({ weight: 0 }), 'weight must not be less than 0.1')
    await invalid(quoteBody({ pickup_address: undefined }), 'pickup_address should not be empty', [{ field: 'pickup_address', message: 'pickup_address should not be empty' }])
    await invalid(quoteBody({ pickup_address: null }), 'pickup_address should not be empty')
    await invalid(quoteBody({ pickup_address: '   ' }), 'pickup_address should not be empty')
    await invalid(quoteBody({ dropoff_address: 'ab' }), 'dropoff_address must be longer than or equal to 3 characters', [{ field: 'dropoff_address', message: 'dropoff_address must be longer than or equal to 3 characters' }])
    await invalid(quoteBody({ dropoff_address: 'x'.repeat(501) }), 'dropoff_address must be shorter than or equal to 500 characters')
    await invalid(quoteBody({ dropoff_address: 42 }), 'dropoff_address must be a string')
    await invalid(quoteBody({ vehicle_type: 'car' }), 'vehicle_type must be one of the following values: bike, bus_van, truck')
    await invalid(quoteBody({ vehicle_type: 'BIKE' }), 'vehicle_type must be one of the following values: bike, bus_van, truck')
    await invalid(quoteBody({ weight: '2' }), 'weight must be a number', [{ field: 'weight', message: 'weight must be a number' }])
    await invalid(quoteBody({ weight: undefined }), 'weight should not be empty')
    await invalid([quoteBody()], 'body must be a JSON object', [{ message: 'body must be a JSON object' }])
    assertError(t, await quote(account.apiKey, JSON.stringify('a string'), { 'content-type': 'application/json' }), { status: 400, path: QUOTE, message: 'body must be a JSON object', errors: 'listed' })
    assertError(t, await quote(account.apiKey, 'null', { 'content-type': 'application/json' }), { status: 400, path: QUOTE, message: 'body must be a JSON object', errors: 'listed' })
    await invalid(quoteBody({ option_id: account.options['Up to 5 kg'] }), 'option_id must be omitted for bike; the band is chosen by weight', [{ field: 'option_id', message: 'option_id must be omitted for bike; the band is chosen by weight' }])
    await invalid(quoteBody({ vehicle_type: 'truck' }), 'option_id is required when vehicle_type is truck')
    await invalid(quoteBody({ vehicle_type: 'bus_van' }), 'option_id is required when vehicle_type is bus_van')
    await invalid(quoteBody({ vehicle_type: undefined, option_id: account.options['5-tonne truck'] }), 'vehicle_type is required when option_id is sent')
    await invalid(quoteBody({ pickup_longitude: undefined }), 'pickup_longitude is required when pickup_latitude is sent', [{ field: 'pickup_longitude', message: 'pickup_longitude is required when pickup_latitude is sent' }])
    await invalid(quoteBody({ dropoff_latitude: undefined }), 'dropoff_latitude is required when dropoff_longitude is sent')
    await invalid(quoteBody({ pickup_latitude: 91 }), 'pickup_latitude must not be greater than 90')
    await invalid(quoteBody({ dropoff_longitude: -180.5 }), 'dropoff_longitude must not be less than -180')

    // Several mistakes at once: `message` is the first, `errors` has them all.
    await invalid({ dropoff_address: 'ab', weight: 'heavy', vehicle_type: 'car', pickup_latitude: 6.45 }, 'pickup_address should not be empty', [
      { field: 'pickup_address', message: 'pickup_address should not be empty' },
      { field: 'dropoff_address', message: 'dropoff_address must be longer than or equal to 3 characters' },
      { field: 'weight', message: 'weight must be a number' },
      { field: 'vehicle_type', message: 'vehicle_type must be one of the following values: bike, bus_van, truck' },
      { field: 'pickup_longitude', message: 'pickup_longitude is required when pickup_latitude is sent' },
    ])
  })

  t.test('pricing refusals reach the caller as 400 with the exact message', async (t) => {
    const refused = async (apiKey: string, body: unknown, message: string) =>
      assertError(t, await quote(apiKey, body), { status: 400, path: QUOTE, message })
    const truck = account.options['5-tonne truck']

    await refused(account.apiKey, quoteBody({ vehicle_type: 'truck', option_id: 'opt_0000000000AA' }), 'option_id opt_0000000000AA is not in your rate card for truck; read GET /business/rate-cards again')
    // A real id of the card, but for another vehicle type.
    await refused(account.apiKey, quoteBody({ vehicle_type: 'bus_van', option_id: truck }), `option_id ${truck} is not in your rate card for bus_van; read GET /business/rate-cards again`)
    await refused(account.apiKey, quoteBody({ weight: 20.01 }), 'weight exceeds the largest bike band (20 kg); use bus_van or truck')
    await refused(account.apiKey, quoteBody({ vehicle_type: 'truck', option_id: truck, weight: 5000.01 }), 'weight exceeds the capacity of 5-tonne truck (5000 kg)')
    await refused(account.apiKey, quoteBody({ vehicle_type: 'bus_van', option_id: account.options['Mini van'], weight: 1001 }), 'weight exceeds the capacity of Mini van (1000 kg)')
    await refused(account.apiKey, quoteBody(ends(KANO, IKEJA)), 'pickup point is outside the service zones of your rate card')
    await refused(account.apiKey, quoteBody(ends(ISLAND, KANO)), 'dropoff point is outside the service zones of your rate card')
    await refused(bare.apiKey, quoteBody(), 'No rate card is enabled for this account')
    await refused(bare.apiKey, quoteBody({ vehicle_type: 'truck', option_id: truck }), 'No rate card is enabled for this account')
    await refused(account.apiKey, quoteBody({ pickup_latitude: undefined, pickup_longitude: undefined, dropoff_latitude: undefined, dropoff_longitude: undefined, pickup_address: 'Ikeja', dropoff_address: 'Qwzx Plaza' }), 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude')
    await refused(account.apiKey, quoteBody({ pickup_latitude: undefined, pickup_longitude: undefined, pickup_address: 'Qwzx Plaza' }), 'pickup_address could not be located; send pickup_latitude and pickup_longitude')

    // Distance pricing bounds no weight, but a price must stay an exact number (1.8e308 kg once priced as null).
    await refused(account.apiKey, quoteBody({ vehicle_type: undefined, weight: 1.7976931348623157e308 }), 'weight is too large to price')
    await refused(bare.apiKey, quoteBody({ vehicle_type: undefined, weight: 1e15 }), 'weight is too large to price')

    const oneWay = await seedAccount(sql, {
      name: 'One Way Ltd',
      card: {
        name: 'One Way Card',
        currency: 'NGN',
        zones: [
          { name: 'Alpha', polygon: [[3.37, 6.41], [3.45, 6.41], [3.45, 6.47], [3.37, 6.47], [3.37, 6.41]] },
          { name: 'Beta', polygon: [[3.45, 6.41], [3.62, 6.41], [3.62, 6.48], [3.45, 6.48], [3.45, 6.41]] },
        ],
        options: [{ vehicle_type: 'truck', label: '5-tonne truck', max_weight_kg: 5000, prices: [{ from: 'Alpha', to: 'Beta', price: 45000 }] }],
      },
    })
    const oneWayTruck = { vehicle_type: 'truck', option_id: oneWay.options['5-tonne truck'], weight: 100 }
    const there = await quote(oneWay.apiKey, quoteBody({ ...oneWayTruck, ...ends(ISLAND, LEKKI) }))
    t.equal(there.statusCode, 200, there.body)
    t.equal(there.json().price, 45000)
    await refused(oneWay.apiKey, quoteBody({ ...oneWayTruck, ...ends(LEKKI, ISLAND) }), '5-tonne truck has no price from Beta to Alpha')
  })

  t.test('rate-card quotes', async (t) => {
    const cases: { body: Record<string, unknown>; from: Point; to: Point; price: number; option: string; mode: string; zones: [string, string] }[] = [
      { body: { weight: 2 }, from: ISLAND, to: IKEJA, price: 3500, option: 'Up to 5 kg', mode: 'MOTORBIKE', zones: ['Island', 'Ikeja'] },
      { body: { weight: 5 }, from: ISLAND, to: IKEJA, price: 3500, option: 'Up to 5 kg', mode: 'MOTORBIKE', zones: ['Island', 'Ikeja'] },
      { body: { weight: 5.01 }, from: IKEJA, to: ISLAND, price: 4900, option: '5 to 10 kg', mode: 'MOTORBIKE', zones: ['Ikeja', 'Island'] },
      { body: { weight: 20 }, from: LEKKI, to: ISLAND, price: 5300, option: '10 to 20 kg', mode: 'MOTORBIKE', zones: ['Lekki', 'Island'] },
      { body: { vehicle_type: 'bus_van', option_id: account.options['Mini van'], weight: 1000 }, from: ISLAND, to: LEKKI, price: 15000, option: 'Mini van', mode: 'BUS_VAN', zones: ['Island', 'Lekki'] },
      { body: { vehicle_type: 'truck', option_id: account.options['5-tonne truck'], weight: 5000 }, from: LEKKI, to: IKEJA, price: 112500, option: '5-tonne truck', mode: 'TRUCK', zones: ['Lekki', 'Ikeja'] },
    ]
    for (const c of cases) {
      const response = await quote(account.apiKey, quoteBody({ ...c.body, ...ends(c.from, c.to) }))
      t.equal(response.statusCode, 200, response.body)
      t.strictSame(response.json(), {
        price: c.price,
        distance_km: expectedKm(c.from, c.to),
        currency: 'NGN',
        pricing_model: 'rate_card',
        option_id: account.options[c.option],
        option_label: c.option,
        delivery_mode: c.mode,
        from_zone_name: c.zones[0],
        to_zone_name: c.zones[1],
      }, `${c.option} ${c.zones.join(' to ')}`)
    }
  })

  t.test('distance quotes', async (t) => {
    const cases: { from: Point; to: Point; weight: number; mode: string }[] = [
      { from: ISLAND, to: IKEJA, weight: 2, mode: 'MOTORBIKE' },
      { from: ISLAND, to: ISLAND, weight: 0.1, mode: 'MOTORBIKE' },
      { from: LEKKI, to: IKEJA, weight: 20, mode: 'MOTORBIKE' },
      { from: LEKKI, to: IKEJA, weight: 20.01, mode: 'BUS_VAN' },
      { from: LEKKI, to: ISLAND, weight: 1000, mode: 'BUS_VAN' },
      { from: IKEJA, to: LEKKI, weight: 1000.5, mode: 'TRUCK' },
      { from: ISLAND, to: LEKKI, weight: 12345.67, mode: 'TRUCK' },
    ]
    for (const c of cases) {
      for (const who of [account, bare]) {
        const response = await quote(who.apiKey, quoteBody({ vehicle_type: undefined, weight: c.weight, ...ends(c.from, c.to) }))
        t.equal(response.statusCode, 200, response.body)
        const km = expectedKm(c.from, c.to)
        t.strictSame(response.json(), {
          price: distancePrice(km, c.weight),
          distance_km: km,
          currency: 'NGN',
          pricing_model: 'distance',
          option_id: null,
          option_label: null,
          delivery_mode: c.mode,
          from_zone_name: null,
          to_zone_name: null,
        }, `${c.weight} kg over ${km} km`)
      }
    }
    const short = await quote(bare.apiKey, quoteBody({ vehicle_type: undefined, weight: 1, ...ends(ISLAND, ISLAND) }))
    t.equal(short.json().price, 1000, 'a short, light parcel pays the minimum fare')
    t.equal(short.json().distance_km, 0)
  })

  t.test('quotes from addresses alone are geocoded', async (t) => {
    // The gazetteer's points for the two districts, copied so a moved point shows up here.
    const ikeja = { lat: 6.6018, lng: 3.3515 }
    const victoriaIsland = { lat: 6.4281, lng: 3.4219 }
    const response = await quote(account.apiKey, { pickup_address: 'Ikeja', dropoff_address: 'Victoria Island', weight: 3, vehicle_type: 'bike' })
    t.equal(response.statusCode, 200, response.body)
    t.strictSame(response.json(), {
      price: 3500,
      distance_km: expectedKm(ikeja, victoriaIsland),
      currency: 'NGN',
      pricing_model: 'rate_card',
      option_id: account.options['Up to 5 kg'],
      option_label: 'Up to 5 kg',
      delivery_mode: 'MOTORBIKE',
      from_zone_name: 'Ikeja',
      to_zone_name: 'Island',
    })
    // One end pinned, the other geocoded.
    const mixed = await quote(account.apiKey, { pickup_address: 'somewhere pinned', pickup_latitude: LEKKI.lat, pickup_longitude: LEKKI.lng, dropoff_address: '14 Adeola Odeku Street, Victoria Island', weight: 3, vehicle_type: 'bike' })
    t.equal(mixed.statusCode, 200, mixed.body)
    t.match(mixed.json(), { price: 2800, from_zone_name: 'Lekki', to_zone_name: 'Island', distance_km: expectedKm(LEKKI, victoriaIsland) })
  })

  t.test('catalog', async (t) => {
    const response = await catalog(account.apiKey)
    t.equal(response.statusCode, 200)
    const body = response.json()
    t.match(body.updated_at, ISO_UTC)
    const option = (label: string, min: number | null, max: number) => ({ id: account.options[label], label, min_weight_kg: min, max_weight_kg: max })
    t.strictSame(body, {
      currency: 'NGN',
      rate_card_id: account.card!.rate_card_id,
      version: 1,
      updated_at: body.updated_at,
      rate_cards: [
        { vehicle_type: 'bike', delivery_mode: 'MOTORBIKE', options: [option('Up to 5 kg', 0, 5), option('5 to 10 kg', 5, 10), option('10 to 20 kg', 10, 20)] },
        { vehicle_type: 'bus_van', delivery_mode: 'BUS_VAN', options: [option('Mini van', null, 1000)] },
        { vehicle_type: 'truck', delivery_mode: 'TRUCK', options: [option('5-tonne truck', null, 5000)] },
      ],
      zones: ['Island', 'Lekki', 'Mainland', 'Ikeja'],
    })
    for (const id of Object.values(account.options)) t.match(id, /^opt_[0-9A-HJKMNP-TV-Z]{12}$/)

    const empty = await catalog(bare.apiKey)
    t.equal(empty.statusCode, 200)
    t.strictSame(empty.json().rate_cards, [])
    t.equal(empty.json().currency, 'NGN')
  })

  t.test('tenant isolation: another business cannot use my option ids', async (t) => {
    const other = await seedAccount(sql, { name: 'Other Ltd' })
    const mine = account.options['5-tonne truck']
    assertError(t, await quote(other.apiKey, quoteBody({ vehicle_type: 'truck', option_id: mine })), {
      status: 400,
      path: QUOTE,
      message: `option_id ${mine} is not in your rate card for truck; read GET /business/rate-cards again`,
    })
    const own = await quote(other.apiKey, quoteBody({ vehicle_type: 'truck', option_id: other.options['5-tonne truck'] }))
    t.equal(own.statusCode, 200, own.body)
    t.equal(own.json().option_id, other.options['5-tonne truck'])
    const theirs = (await catalog(other.apiKey)).json()
    t.notOk(JSON.stringify(theirs).includes(mine), "A's ids never appear in B's catalog")
  })

  t.test('a re-import changes option ids; the old id is refused within 1 s', async (t) => {
    const cardName = 'Reimport Card'
    const tenant = await seedAccount(sql, { name: 'Reimport Ltd', card: { ...demoCardFile(), name: cardName } })
    const oldTruck = tenant.options['5-tonne truck']
    const truckQuote = (optionId: string) => quote(tenant.apiKey, quoteBody({ vehicle_type: 'truck', option_id: optionId, weight: 3000 }))
    t.equal((await truckQuote(oldTruck)).statusCode, 200, 'the old id works and the card is now cached')

    const reimported = await importRateCard(sql, { ...demoCardFile(), name: cardName }, 'NGN')
    t.equal(reimported.rate_card_id, tenant.card!.rate_card_id)
    t.equal(reimported.version, 2)
    const newTruck = reimported.options.find((option) => option.label === '5-tonne truck')!.id
    t.not(newTruck, oldTruck)
    const publishedAt = Date.now()
    await publishInvalidation(publisher, db.config.QUEUE_PREFIX, { kind: 'rate-card', rateCardId: reimported.rate_card_id })
    const response = await waitFor(() => truckQuote(oldTruck), (r) => r.statusCode !== 200, 1000)
    t.ok(Date.now() - publishedAt <= 1100, 'refused within about a second')
    assertError(t, response, { status: 400, path: QUOTE, message: `option_id ${oldTruck} is not in your rate card for truck; read GET /business/rate-cards again` })

    const fresh = await truckQuote(newTruck)
    t.equal(fresh.statusCode, 200, fresh.body)
    t.equal(fresh.json().option_id, newTruck)
    const body = (await catalog(tenant.apiKey)).json()
    t.equal(body.version, 2)
    t.equal(body.rate_cards.find((group: any) => group.vehicle_type === 'truck').options[0].id, newTruck)
  })

  t.test('x-request-id', async (t) => {
    const own = await gateway.inject({ method: 'GET', url: CATALOG, headers: { ...bearer(account.apiKey), 'x-request-id': 'trace-42.a:b' } })
    t.equal(own.statusCode, 200)
    t.equal(own.headers['x-request-id'], 'trace-42.a:b', "a caller's own id is echoed")
    const ownError = await gateway.inject({ method: 'POST', url: QUOTE, headers: { 'x-request-id': 'trace-43' }, payload: quoteBody() })
    t.equal(ownError.headers['x-request-id'], 'trace-43')
    t.equal(ownError.json().request_id, 'trace-43', 'and carried in the error body')

    const first = await catalog(account.apiKey)
    const second = await catalog(account.apiKey)
    for (const response of [first, second]) t.match(response.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'one is generated otherwise')
    t.not(first.headers['x-request-id'], second.headers['x-request-id'], 'a fresh one per request')
    t.match((await gateway.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id'], /^[0-9a-f-]{36}$/, 'health answers carry one too')
  })
})

t.test('a bad environment value stops start-up with a message naming it', async (t) => {
  const run = (service: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'services', service, 'main.js')], {
        cwd: projectRoot,
        env: { ...process.env, LOG_LEVEL: 'silent', GATEWAY_PORT: '0', PRICING_PORT: '0', HOST: '127.0.0.1', ...env },
      })
      let stderr = ''
      child.stderr.on('data', (chunk) => (stderr += chunk))
      // A process that accepted the value would listen forever: stop it so the test fails, not hangs.
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      child.on('error', reject)
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stderr })
      })
    })

  const cases: [string, Record<string, string>, string][] = [
    ['gateway', { GATEWAY_PORT: 'notaport' }, 'GATEWAY_PORT'],
    ['gateway', { DATABASE_URL: 'nope' }, 'DATABASE_URL'],
    ['pricing', { GEOCODER: 'bogus' }, 'GEOCODER'],
  ]
  await Promise.all(cases.map(async ([service, env, variable]) => {
    const { code, stderr } = await run(service, env)
    t.equal(code, 1, `${service} with ${JSON.stringify(env)} exits 1`)
    t.match(stderr, new RegExp(`^${service}: Invalid configuration: .*\\b${variable}\\b`), `stderr names ${variable}: ${stderr.trim()}`)
  }))
})

t.test('the OpenAPI document is served without a key and describes the request schemas', async (t) => {
  const { gateway } = await startStack(t, { worker: false })
  const response = await gateway.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  t.equal(document.openapi, '3.1.0')
  const shipment = document.paths['/business/order'].post.requestBody.content['application/json'].schema
  t.equal(shipment.maxItems, 100)
  t.same(shipment.items.required, ['dropoff_address', 'dropoff_state', 'recipient_name', 'recipient_phone', 'item_name', 'weight', 'quantity'])
  t.same(shipment.items.properties.vehicle_type.enum, ['bike', 'bus_van', 'truck'])
  const quote = document.paths['/business/order/cost'].post
  t.equal(quote.requestBody.content['application/json'].schema.properties.weight.minimum, 0.1)
  t.ok(quote.responses['200'].content['application/json'].schema.properties.pricing_model)
})
