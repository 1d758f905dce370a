import type { LightMyRequestResponse } from 'fastify'
import fc from 'fast-check'
import t from 'tap'
import { DEFAULT_PLATFORM_RATES, savePlatformRates } from '../../shared/db/platform-rates.js'
import { seedAccount } from '../helpers/accounts.js'
import { nearly, someOf } from '../helpers/arbitraries.js'
import { checkErrorBody } from '../helpers/gateway.js'
import { bearer, startStack } from '../helpers/stack.js'

const QUOTE = '/v2/business/order/cost'
const PLACE = '/v2/business/order'
// Exact in kobo: finite, at most 2 decimals, and within the integers a double holds exactly.
const isMoney = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0 && value * 100 <= Number.MAX_SAFE_INTEGER && Math.round(value * 100) / 100 === value

type Point = { lat: number; lng: number }
// Computed here, not with the service's helpers: R = 6371.0088 km, road factor 1.3, half-up to 0.01 km.
function expectedKm(a: Point, b: Point): number {
  const rad = (d: number) => (d * Math.PI) / 180
  const h = Math.sin(rad(b.lat - a.lat) / 2) ** 2 + Math.cos(rad(a.lat)) * Math.cos(rad(b.lat)) * Math.sin(rad(b.lng - a.lng) / 2) ** 2
  return Math.round(2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(h))) * 1.3 * 100 + 1e-9) / 100
}

/** Throws unless a 200 quote has the spec's fields with sane values. */
function checkQuote(response: LightMyRequestResponse): void {
  const body = response.json()
  const fail = (why: string) => { throw new Error(`${why}: ${response.body}`) }
  if (!isMoney(body.price)) fail('price is not an amount with at most 2 decimals')
  if (!isMoney(body.distance_km)) fail('distance_km is not a distance with at most 2 decimals')
  if (body.currency !== 'NGN') fail('currency is not NGN')
  if (!['MOTORBIKE', 'BUS_VAN', 'TRUCK'].includes(body.delivery_mode)) fail('delivery_mode is unknown')
  if (body.pricing_model === 'rate_card') {
    for (const field of ['option_id', 'option_label', 'from_zone_name', 'to_zone_name']) if (typeof body[field] !== 'string') fail(`${field} is not a string`)
  } else if (body.pricing_model === 'distance') {
    for (const field of ['option_id', 'option_label', 'from_zone_name', 'to_zone_name']) if (body[field] !== null) fail(`${field} is not null`)
  } else fail('pricing_model is unknown')
}

/** JSON as a client would send it; `undefined` (top level) becomes `null`, NaN and ±Infinity become null. */
const asJson = (value: unknown) => JSON.stringify(value) ?? 'null'

t.test('random bodies never break the gateway', async (t) => {
  // The whole globe and any length of trip: this file checks the formula and the error bodies;
  // the service area and the distance limit have their own test (pricing-pipeline.test.ts).
  const { gateway, db } = await startStack(t, { env: { SERVICE_AREA_BBOX: '-90,-180,90,180' } })
  const { sql } = db
  // Past what an operator may set (2 000 km): written as stored, the limit is out of the way of any trip on the globe.
  await sql.begin((tx) => savePlatformRates(tx, { ...DEFAULT_PLATFORM_RATES, maxDistanceKm: 30_000 }))
  // No money: a placement that passes validation must end in a 400, never in orders.
  const account = await seedAccount(sql, { balance: 0 })
  const optionIds = Object.values(account.options)
  const statuses = { quote: new Map<number, number>(), place: new Map<number, number>() }

  const send = async (url: string, payload: string): Promise<void> => {
    const response = await gateway.inject({ method: 'POST', url, headers: { ...bearer(account.apiKey), 'content-type': 'application/json' }, payload })
    const seen = url === QUOTE ? statuses.quote : statuses.place
    seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1)
    if (response.statusCode >= 500) throw new Error(`5xx for ${payload.slice(0, 500)}: ${response.body}`)
    if (response.statusCode >= 400) checkErrorBody(response, url)
    else if (url === QUOTE) {
      if (response.statusCode !== 200) throw new Error(`quote answered ${response.statusCode}`)
      checkQuote(response)
    } else throw new Error(`a placement without money answered ${response.statusCode}: ${response.body}`)
  }
  const sendBoth = async (payload: string) => {
    await send(QUOTE, payload)
    await send(PLACE, payload)
  }

  // Values of every JSON type, plus ones close to what the fields accept.
  const anyValue = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.string({ minLength: 3, maxLength: 600 }),
    fc.double(),
    fc.double({ min: -200, max: 200, noNaN: true }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('bike', 'bus_van', 'truck', 'Ikeja', 'Victoria Island', 'Lekki Phase 1', 'Lagos', ...optionIds),
    fc.jsonValue({ maxDepth: 2 }),
  )
  const quoteFields = ['pickup_address', 'dropoff_address', 'weight', 'vehicle_type', 'option_id', 'pickup_state', 'dropoff_state', 'pickup_latitude', 'pickup_longitude', 'dropoff_latitude', 'dropoff_longitude'] as const
  const shipmentFields = [...quoteFields, 'dropoff_state', 'recipient_name', 'recipient_phone', 'item_name', 'quantity', 'sender_name', 'sender_phone', 'recipient_email', 'alternate_phone', 'item_category', 'item_description', 'declared_value', 'is_fragile'] as const
  const randomRecord = (fields: readonly string[]) => someOf(fields, () => anyValue)

  // A valid request with a few fields replaced: most of these reach pricing or the worker.
  const validQuote = { pickup_address: 'Broad Street, Lagos Island', dropoff_address: 'Allen Avenue, Ikeja', weight: 2, vehicle_type: 'bike', pickup_latitude: 6.45, pickup_longitude: 3.4, dropoff_latitude: 6.6, dropoff_longitude: 3.35 }
  const validShipment = { ...validQuote, dropoff_address: '5 Allen Avenue, Ikeja', dropoff_state: 'Lagos', recipient_name: 'Chidi Okafor', recipient_phone: '+2348020000000', item_name: 'Phone case', quantity: 1 }

  t.test('any JSON value', async (t) => {
    await fc.assert(fc.asyncProperty(fc.jsonValue(), (value) => sendBoth(asJson(value))), { numRuns: 400 })
    t.pass('400 random JSON values to both endpoints: no 5xx, every error body well-formed')
  })

  t.test('anything, made JSON-safe', async (t) => {
    await fc.assert(fc.asyncProperty(fc.anything({ maxDepth: 3 }), (value) => sendBoth(asJson(value))), { numRuns: 400 })
    t.pass('400 arbitrary values')
  })

  t.test('raw bytes and truncated JSON', async (t) => {
    const text = fc.oneof(fc.string({ maxLength: 200 }), fc.jsonValue().map((value) => asJson(value)).chain((json) => fc.nat(json.length).map((cut) => json.slice(0, cut))))
    await fc.assert(fc.asyncProperty(text, (payload) => sendBoth(payload)), { numRuns: 300 })
    t.pass('300 arbitrary strings as JSON bodies')
  })

  t.test('objects with the real field names and values of any type', async (t) => {
    const { vehicle_type: _, ...validDistanceQuote } = validQuote
    const quoteLike = fc.oneof(randomRecord(quoteFields), nearly<unknown>(validQuote, quoteFields, anyValue), nearly<unknown>(validDistanceQuote, quoteFields, anyValue))
    await fc.assert(fc.asyncProperty(quoteLike, (body) => send(QUOTE, asJson(body))), { numRuns: 1200 })

    const shipmentLike = fc.oneof(randomRecord(shipmentFields), nearly<unknown>(validShipment, shipmentFields, anyValue), nearly<unknown>(validShipment, shipmentFields, anyValue))
    const placementLike = fc.oneof(
      { weight: 4, arbitrary: fc.array(shipmentLike, { minLength: 1, maxLength: 3 }) },
      { weight: 1, arbitrary: shipmentLike },
      { weight: 1, arbitrary: fc.array(anyValue, { maxLength: 3 }) },
    )
    await fc.assert(fc.asyncProperty(placementLike, (body) => send(PLACE, asJson(body))), { numRuns: 500 })
    t.pass('random quote and placement objects')
  })

  t.test('distance quotes: any two points and any weight give the formula price or a 400', async (t) => {
    const lat = fc.integer({ min: -900000, max: 900000 }).map((n) => n / 10000)
    const lng = fc.integer({ min: -1800000, max: 1800000 }).map((n) => n / 10000)
    const weight = fc.oneof(
      fc.integer({ min: 10, max: 100_000_000 }).map((n) => n / 100),
      fc.double({ min: 0.1, noNaN: true, noDefaultInfinity: true }),
    )
    let priced = 0
    await fc.assert(fc.asyncProperty(lat, lng, lat, lng, weight, async (aLat, aLng, bLat, bLng, kg) => {
      const body = { pickup_address: 'pinned', dropoff_address: 'pinned', weight: kg, pickup_latitude: aLat, pickup_longitude: aLng, dropoff_latitude: bLat, dropoff_longitude: bLng }
      const response = await gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(account.apiKey), payload: body })
      if (response.statusCode === 400) {
        checkErrorBody(response, QUOTE)
        if (response.json().message !== 'weight is too large to price' || kg < 1e9) throw new Error(`refused ${JSON.stringify(body)}: ${response.body}`)
        return
      }
      if (response.statusCode !== 200) throw new Error(`${response.statusCode} for ${JSON.stringify(body)}: ${response.body}`)
      checkQuote(response)
      const quote = response.json()
      const km = expectedKm({ lat: aLat, lng: aLng }, { lat: bLat, lng: bLng })
      if (quote.distance_km !== km) throw new Error(`distance_km ${quote.distance_km}, expected ${km}`)
      const mode = kg <= 20 ? 'MOTORBIKE' : kg <= 1000 ? 'BUS_VAN' : 'TRUCK'
      if (quote.pricing_model !== 'distance' || quote.delivery_mode !== mode) throw new Error(`expected distance pricing by ${mode}: ${response.body}`)
      // Weights with 2 decimals price exactly: max(1000, 500 + 120 × km + 50 × kg), in kobo.
      if (Number.isInteger(kg * 100)) {
        const price = Math.max(100000, 50000 + 120 * Math.round(km * 100) + 50 * Math.round(kg * 100)) / 100
        if (quote.price !== price) throw new Error(`price ${quote.price}, expected ${price} for ${JSON.stringify(body)}`)
        priced++
      }
    }), { numRuns: 400 })
    t.ok(priced > 100, `most runs checked the exact price (${priced})`)
  })

  t.test('the generators reached every layer, and no order was created', async (t) => {
    t.ok((statuses.quote.get(200) ?? 0) > 50, `many quotes were priced: ${JSON.stringify([...statuses.quote])}`)
    t.ok((statuses.quote.get(400) ?? 0) > 50, 'many quotes were refused')
    t.ok((statuses.place.get(400) ?? 0) > 50, `many placements were refused: ${JSON.stringify([...statuses.place])}`)
    const [counts] = await sql`
      select (select count(*) from orders)::int as orders,
             (select count(*) from ledger_entries)::int as ledger,
             (select count(*) from placements where status = 'failed')::int as failed,
             (select balance from wallets where business_id = ${account.businessId})::int as balance`
    t.ok(counts.failed > 0, `some placements passed validation and were refused by the worker (${counts.failed})`)
    t.equal(counts.orders, 0, 'no order exists')
    t.equal(counts.ledger, 0, 'no ledger entry exists')
    t.equal(counts.balance, 0, 'the wallet is untouched')
  })
})
