import t, { type Test } from 'tap'
import { pricingFailure } from '../../services/gateway/pricing-client.js'
import { roadDistanceKm } from '../../shared/pricing/distance.js'
import { demoCardFile, seedAccount } from '../helpers/accounts.js'
import { TEST_INTERNAL_TOKEN } from '../helpers/db.js'
import { IKEJA, ISLAND, shipment } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'

const QUOTE = '/v2/business/order/cost'
const PLACE = '/v2/business/order'
const KANO = { lat: 12.0022, lng: 8.592 }
const ACCRA = { lat: 5.6037, lng: -0.187 }
const ends = (from: { lat: number; lng: number }, to: { lat: number; lng: number }) => ({ pickup_latitude: from.lat, pickup_longitude: from.lng, dropoff_latitude: to.lat, dropoff_longitude: to.lng })

/**
 * A quote and a placement refuse the same input with the same message: both run the one
 * pipeline of shared/pricing/pipeline.ts, the quote in the pricing service, the placement in
 * the worker. Each bad shipment is placed behind a good one, so its index is not 0.
 */
t.test('quote and placement refuse alike', async (t) => {
  const { gateway, pricing, db } = await startStack(t)
  const card = demoCardFile()
  // One-way truck: Ikeja → Island has no price.
  for (const option of card.options) if (option.vehicle_type === 'truck') option.prices = option.prices.filter((price: { from: string; to: string }) => !(price.from === 'Ikeja' && price.to === 'Island'))
  const account = await seedAccount(db.sql, { balance: 1_000_000, card: { ...card, name: 'One Way Truck' } })
  const bare = await seedAccount(db.sql, { balance: 1_000_000, card: null, name: 'No Card Ltd' })

  const quote = (apiKey: string, body: unknown) => gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(apiKey), payload: body as never })
  const place = (apiKey: string, body: unknown) => gateway.inject({ method: 'POST', url: PLACE, headers: bearer(apiKey), payload: body as never })

  /** The shipment's fields a quote shares (weight × quantity of 1 is the billable weight). */
  const asQuote = (fields: Record<string, unknown>) => {
    const { recipient_name, recipient_phone, item_name, quantity, ...quoteFields } = fields
    return { pickup_address: 'Broad Street, Lagos Island', ...quoteFields }
  }

  // A message about a field starts with `[i].` in a batch (DESIGN 13.9); the rest read alike.
  const refusedAlike = async (t: Test, apiKey: string, overrides: Record<string, unknown>, message: string, aboutField = false) => {
    const bad = shipment({ pickup_address: 'Broad Street, Lagos Island', ...overrides })
    const quoted = await quote(apiKey, asQuote(bad))
    t.equal(quoted.statusCode, 400, quoted.body)
    t.match(quoted.json(), { statusCode: 400, path: QUOTE, message })
    const good = shipment({ vehicle_type: undefined })
    const placed = await place(apiKey, [good, bad])
    t.equal(placed.statusCode, 400, placed.body)
    t.match(placed.json(), { statusCode: 400, path: PLACE, message: 'One or more orders could not be placed' })
    t.same(placed.json().errors, [{ index: 1, message: aboutField ? `[1].${message}` : message }], 'the same message, at the shipment\'s index')
  }

  t.test('an account without a card and an unlocatable address: no card, before geocoding', async (t) => {
    // A state the gazetteer does not know: Lagos would stand for the address.
    const unlocatable = { dropoff_address: 'Qwzx Plaza', dropoff_state: 'Atlantis', dropoff_latitude: undefined, dropoff_longitude: undefined }
    await refusedAlike(t, bare.apiKey, unlocatable, 'No rate card is enabled for this account')
    await refusedAlike(t, account.apiKey, unlocatable, 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude', true)
  })

  t.test('outside the service area, whatever the pricing model', async (t) => {
    await refusedAlike(t, account.apiKey, ends(ISLAND, ACCRA), 'dropoff point is outside the service area')
    await refusedAlike(t, account.apiKey, { ...ends(ACCRA, IKEJA), vehicle_type: undefined }, 'pickup point is outside the service area')
    await refusedAlike(t, bare.apiKey, { ...ends(ACCRA, IKEJA), vehicle_type: undefined }, 'pickup point is outside the service area')
  })

  t.test('over the distance limit', async (t) => {
    const km = roadDistanceKm(IKEJA, KANO, 1.3).toFixed(2)
    await refusedAlike(t, bare.apiKey, { ...ends(IKEJA, KANO), vehicle_type: undefined }, `distance ${km} km exceeds the 80 km limit of local delivery`)
    // Kano is in no zone of the card: zones are refused before the distance.
    await refusedAlike(t, account.apiKey, ends(IKEJA, KANO), 'dropoff point is outside the service zones of your rate card')
  })

  t.test('no price between two zones', async (t) => {
    await refusedAlike(t, account.apiKey, { ...ends(IKEJA, ISLAND), vehicle_type: 'truck', option_id: account.options['5-tonne truck'], weight: 100 }, '5-tonne truck has no price from Ikeja to Island')
  })

  t.test('pricing answers with the API error body; the gateway relays message and errors at its own path', async (t) => {
    const answer = await pricing.inject({ method: 'POST', url: '/internal/quote', headers: { authorization: `Bearer ${TEST_INTERNAL_TOKEN}` }, payload: { business_id: bare.businessId, request: { pickup_address: 'ab', weight: 0.01 } } })
    t.equal(answer.statusCode, 400)
    const body = answer.json()
    t.match(body, { statusCode: 400, path: '/internal/quote', message: 'pickup_address must be longer than or equal to 3 characters', timestamp: String, request_id: String })
    t.ok(body.errors.length >= 3, 'every violation is listed')
    const relayed = pricingFailure({ statusCode: answer.statusCode, body: answer.body })
    t.equal(relayed.statusCode, 400)
    t.equal(relayed.message, body.message)
    t.same(relayed.extra, { errors: body.errors }, 'errors survive the hop; path, time and request id are the gateway\'s own')
    t.equal(pricingFailure({ statusCode: 400, body: 'not json' }).statusCode, 503, 'an unreadable refusal is pricing\'s trouble')
    t.equal(pricingFailure({ statusCode: 500, body: answer.body }).statusCode, 503)

    const refused = await pricing.inject({ method: 'POST', url: '/internal/quote', headers: { authorization: `Bearer ${TEST_INTERNAL_TOKEN}` }, payload: { business_id: bare.businessId, request: asQuote(shipment({ vehicle_type: 'bike' })) } })
    t.match(refused.json(), { statusCode: 400, path: '/internal/quote', message: 'No rate card is enabled for this account' }, 'a pricing refusal uses the same body')
  })

  t.test('a placement of good shipments still goes through', async (t) => {
    const placed = await place(account.apiKey, [shipment(), shipment({ vehicle_type: undefined })])
    t.equal(placed.statusCode, 201, placed.body)
  })
})
