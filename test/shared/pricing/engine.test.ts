import { DEFAULT_PLATFORM_RATES } from '../../../shared/db/platform-rates.js'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import t from 'tap'
import { PricingError } from '../../../shared/errors/pricing-error.js'
import { buildCatalog } from '../../../shared/pricing/catalog.js'
import { haversineKm, roadDistanceKm } from '../../../shared/pricing/distance.js'
import { osrmDistance } from '../../../shared/pricing/routing.js'
import { priceShipment } from '../../../shared/pricing/engine.js'
import { createQuoter, quoteWith } from '../../../shared/pricing/quoter.js'
import { toQuoteResponse } from '../../../shared/pricing/quote-response.js'
import { priceKey, type PlatformRates, type Point, type PricingRequest, type RateCard, type RateOption, type VehicleType } from '../../../shared/courier.js'

const rect = (w: number, s: number, e: number, n: number): [number, number][] => [[w, s], [e, s], [e, n], [w, n], [w, s]]
// Alpha and Beta share the edge lng = 3.1.
const ALPHA_POINT: Point = { lat: 6.05, lng: 3.05 }
const BETA_POINT: Point = { lat: 6.05, lng: 3.15 }
const NOWHERE: Point = { lat: 7.5, lng: 4.5 }

function option(id: string, vehicleType: VehicleType, label: string, min: number | null, max: number, prices: [string, string, number][]): RateOption {
  return { id, vehicleType, label, minWeightKg: min, maxWeightKg: max, prices: new Map(prices.map(([from, to, kobo]) => [priceKey(from, to), kobo])) }
}

const everyPair = (kobo: number): [string, string, number][] => [['Alpha', 'Alpha', kobo], ['Alpha', 'Beta', kobo + 100], ['Beta', 'Alpha', kobo + 200], ['Beta', 'Beta', kobo + 300]]

function card(overrides: Partial<RateCard> = {}): RateCard {
  return {
    rateCardId: '00000000-0000-4000-8000-000000000001',
    name: 'Test',
    version: 3,
    versionId: '00000000-0000-4000-8000-000000000002',
    currency: 'NGN',
    updatedAt: new Date('2026-11-22T10:00:00.000Z'),
    zones: [{ name: 'Alpha', polygon: rect(3.0, 6.0, 3.1, 6.1) }, { name: 'Beta', polygon: rect(3.1, 6.0, 3.2, 6.1) }],
    options: [
      option('opt_BIKE10', 'bike', '5 to 10 kg', 5, 10, everyPair(200_000)),
      option('opt_BIKE5', 'bike', 'Up to 5 kg', 0, 5, everyPair(150_000)),
      option('opt_BIKE20', 'bike', '10 to 20 kg', 10, 20, everyPair(250_000)),
      option('opt_VAN', 'bus_van', 'Mini van', null, 1000, everyPair(900_000)),
      // One-way only: Alpha → Beta has a price, Beta → Alpha has none.
      option('opt_TRUCK', 'truck', '5-tonne truck', null, 5000, [['Alpha', 'Beta', 4_500_000]]),
    ],
    ...overrides,
  }
}

const RATES: PlatformRates = DEFAULT_PLATFORM_RATES
const NIGERIA = { minLat: 4, minLng: 2.5, maxLat: 14, maxLng: 15 }
const request = (fields: Partial<PricingRequest>): PricingRequest => ({ pickup: ALPHA_POINT, dropoff: ALPHA_POINT, weight: 1, ...fields })
const price = (fields: Partial<PricingRequest>, withCard: RateCard | null = card()) => priceShipment(request(fields), 4.2, withCard, RATES, 'NGN')
const refusal = (fields: Partial<PricingRequest>, withCard: RateCard | null = card()) => {
  try {
    price(fields, withCard)
  } catch (err) {
    if (err instanceof PricingError) return err.message
    throw err
  }
  return 'priced'
}

t.test('bike bands: min < w <= max, the lowest band includes its minimum', async (t) => {
  const band = (weight: number) => price({ vehicleType: 'bike', weight }).optionId
  t.equal(band(0.1), 'opt_BIKE5')
  t.equal(band(5), 'opt_BIKE5', 'exactly 5 kg is "up to 5 kg"')
  t.equal(band(5.01), 'opt_BIKE10')
  t.equal(band(10), 'opt_BIKE10')
  t.equal(band(10.01), 'opt_BIKE20')
  t.equal(band(20), 'opt_BIKE20')
  t.equal(refusal({ vehicleType: 'bike', weight: 20.01 }), 'weight exceeds the largest bike band (20 kg); use bus_van or truck')

  const fromOne = card({ options: [option('opt_A', 'bike', '1 to 3 kg', 1, 3, everyPair(1)), option('opt_B', 'bike', '3 to 8 kg', 3, 8, everyPair(2))] })
  t.equal(price({ vehicleType: 'bike', weight: 1 }, fromOne).optionId, 'opt_A', 'the lowest band takes its own minimum')
  t.equal(price({ vehicleType: 'bike', weight: 3 }, fromOne).optionId, 'opt_A')
  t.equal(refusal({ vehicleType: 'bike', weight: 0.5 }, fromOne), 'weight is below the smallest bike band (1 kg)')
  t.equal(refusal({ vehicleType: 'bike', weight: 9 }, fromOne), 'weight exceeds the largest bike band (8 kg); use bus_van or truck', 'names the real largest band')
})

t.test('rate-card quote: zones, one-way prices, labels and delivery modes', async (t) => {
  const bike = price({ vehicleType: 'bike', weight: 2, pickup: ALPHA_POINT, dropoff: BETA_POINT })
  t.same(bike, { price: 150_100, distanceKm: 4.2, currency: 'NGN', pricingModel: 'rate_card', optionId: 'opt_BIKE5', optionLabel: 'Up to 5 kg', deliveryMode: 'MOTORBIKE', fromZoneName: 'Alpha', toZoneName: 'Beta' })
  t.equal(price({ vehicleType: 'bike', pickup: BETA_POINT, dropoff: ALPHA_POINT }).price, 150_200, 'the reverse direction has its own price')
  t.equal(price({ vehicleType: 'bus_van', optionId: 'opt_VAN', weight: 300 }).deliveryMode, 'BUS_VAN')
  const truck = price({ vehicleType: 'truck', optionId: 'opt_TRUCK', weight: 5000, pickup: ALPHA_POINT, dropoff: BETA_POINT })
  t.equal(truck.price, 4_500_000, 'capacity "up to 5000 kg" includes 5000')
  t.equal(truck.deliveryMode, 'TRUCK')
  t.equal(refusal({ vehicleType: 'truck', optionId: 'opt_TRUCK', pickup: BETA_POINT, dropoff: ALPHA_POINT }), '5-tonne truck has no price from Beta to Alpha')
})

t.test('a point on a boundary is inside; the first zone in card order wins', async (t) => {
  const onSharedEdge = { lat: 6.05, lng: 3.1 }
  t.equal(price({ vehicleType: 'bike', pickup: onSharedEdge }).fromZoneName, 'Alpha')
  const reordered = card({ zones: [...card().zones].reverse() })
  t.equal(price({ vehicleType: 'bike', pickup: onSharedEdge }, reordered).fromZoneName, 'Beta')
  t.equal(price({ vehicleType: 'bike', dropoff: { lat: 6.1, lng: 3.2 } }).toZoneName, 'Beta', 'an outer corner belongs to its zone')
  t.equal(price({ vehicleType: 'bike', dropoff: { lat: 6.0, lng: 3.17 } }).toZoneName, 'Beta', 'an outer edge belongs to its zone')
})

t.test('every refusal of the pricing refusal table', async (t) => {
  t.equal(refusal({ vehicleType: 'bike', optionId: 'opt_BIKE5' }), 'option_id must be omitted for bike; the band is chosen by weight')
  t.equal(refusal({ vehicleType: 'truck' }), 'option_id is required when vehicle_type is truck')
  t.equal(refusal({ vehicleType: 'bus_van' }), 'option_id is required when vehicle_type is bus_van')
  t.equal(refusal({ optionId: 'opt_VAN' }), 'vehicle_type is required when option_id is sent')
  t.equal(refusal({ vehicleType: 'truck', optionId: 'opt_GONE' }), 'option_id opt_GONE is not in your rate card for truck; read GET /business/rate-cards again')
  t.equal(refusal({ vehicleType: 'truck', optionId: 'opt_VAN' }), 'option_id opt_VAN is not in your rate card for truck; read GET /business/rate-cards again', 'a van id is no truck id')
  t.equal(refusal({ vehicleType: 'bike', weight: 25 }), 'weight exceeds the largest bike band (20 kg); use bus_van or truck')
  t.equal(refusal({ vehicleType: 'truck', optionId: 'opt_TRUCK', weight: 5000.01, dropoff: BETA_POINT }), 'weight exceeds the capacity of 5-tonne truck (5000 kg)')
  t.equal(refusal({ vehicleType: 'bike', pickup: NOWHERE }), 'pickup point is outside the service zones of your rate card')
  t.equal(refusal({ vehicleType: 'bike', dropoff: NOWHERE }), 'dropoff point is outside the service zones of your rate card')
  t.equal(refusal({ vehicleType: 'truck', optionId: 'opt_TRUCK', dropoff: ALPHA_POINT }), '5-tonne truck has no price from Alpha to Alpha')
  t.equal(refusal({ vehicleType: 'bike' }, null), 'No rate card is enabled for this account')
  t.equal(refusal({ vehicleType: 'bike' }, card({ currency: 'USD' })), 'Your rate card is in USD but this service charges in NGN')
  const located = await quoteWith({ pickup_address: 'nowhere at all', dropoff_address: 'nowhere', weight: 1, pickup_latitude: 6.05, pickup_longitude: 3.05 }, card(), RATES, {
    geocoder: { locate: async () => null },
    distance: { measure: async () => 1 },
    serviceArea: NIGERIA,
    currency: 'NGN',
  }).catch((err: Error) => err.message)
  t.equal(located, 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude')
})

t.test('distance pricing: formula, minimum fare, rounding and delivery mode', async (t) => {
  const distance = (weight: number, km: number, rates = RATES) => priceShipment(request({ weight }), km, card(), rates, 'NGN')
  // 500 + 120 × 10.5 + 50 × 2 = 1860 NGN
  t.same(distance(2, 10.5), { price: 186_000, distanceKm: 10.5, currency: 'NGN', pricingModel: 'distance', optionId: null, optionLabel: null, deliveryMode: 'MOTORBIKE', fromZoneName: null, toZoneName: null })
  t.equal(distance(0.1, 0.2).price, 100_000, 'the minimum fare applies')
  const noMinimum = { ...RATES, baseFare: 0, perKg: 0, minFare: 0, perKm: 33 }
  t.equal(distance(1, 1.5, noMinimum).price, 50, '49.5 kobo rounds half away from zero')
  t.equal(distance(1, 1.49, noMinimum).price, 49)
  t.equal(distance(20, 1).deliveryMode, 'MOTORBIKE')
  t.equal(distance(20.01, 1).deliveryMode, 'BUS_VAN')
  t.equal(distance(1000, 1).deliveryMode, 'BUS_VAN')
  t.equal(distance(1000.5, 1).deliveryMode, 'TRUCK')
  // The property test's counterexample: 3 826 166 781 206 009 kobo is a safe integer, but its
  // naira value is no longer exact, so it is refused rather than shown wrong.
  t.throws(() => distance(765233307691.8018, 20224.75, { ...RATES, maxDistanceKm: 30_000 }), { name: 'PricingError', message: 'weight is too large to price' })
  t.equal(distance(1e9, 100, { ...RATES, maxDistanceKm: 30_000 }).price, 5_000_001_250_000, 'a billion kilograms still prices exactly')
})

t.test('distance_km: haversine with R = 6371.0088 × road factor, half-up to 0.01 km', async (t) => {
  t.equal(haversineKm({ lat: 0, lng: 0 }, { lat: 0, lng: 1 }).toFixed(5), ((2 * Math.PI * 6371.0088) / 360).toFixed(5))
  t.equal(roadDistanceKm({ lat: 0, lng: 0 }, { lat: 0, lng: 1 }, 1.3), 144.55)
  t.equal(roadDistanceKm(ALPHA_POINT, ALPHA_POINT, 1.3), 0)
  const coordinate = fc.record({ lat: fc.double({ min: 4, max: 14, noNaN: true }), lng: fc.double({ min: 2.5, max: 14.5, noNaN: true }) })
  fc.assert(fc.property(coordinate, coordinate, (a, b) => {
    const km = roadDistanceKm(a, b, 1.3)
    const raw = haversineKm(a, b) * 1.3
    return Math.abs(km * 100 - Math.round(km * 100)) < 1e-6 && raw - km < 0.005 + 1e-9 && km - raw <= 0.005 + 1e-9
  }))
})

t.test('OSRM provider: route distance when it answers, haversine when it does not', async (t) => {
  const server = createServer((req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end(req.url?.startsWith('/route/v1/driving/3.05,6.05;3.15,6.05') ? JSON.stringify({ code: 'Ok', routes: [{ distance: 12345 }] }) : '{"code":"NoRoute"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  t.equal(await osrmDistance(url, 1000).measure(ALPHA_POINT, BETA_POINT, 1.3), 12.35, '12.345 km rounds half-up')
  t.equal(await osrmDistance(url, 1000).measure(BETA_POINT, ALPHA_POINT, 1.3), roadDistanceKm(BETA_POINT, ALPHA_POINT, 1.3), 'NoRoute falls back')
  t.equal(await osrmDistance('http://127.0.0.1:1', 500).measure(ALPHA_POINT, BETA_POINT, 1.3), roadDistanceKm(ALPHA_POINT, BETA_POINT, 1.3), 'unreachable falls back')
})

t.test('quote response and catalog shapes', async (t) => {
  const shown = toQuoteResponse(priceShipment(request({ weight: 2 }), 12.34, null, { ...RATES, baseFare: 51_250, perKm: 0, perKg: 0, minFare: 0 }, 'NGN'), null)
  t.same(shown, { price: 512.5, distance_km: 12.34, currency: 'NGN', pricing_model: 'distance', option_id: null, option_label: null, delivery_mode: 'MOTORBIKE', from_zone_name: null, to_zone_name: null, quote_id: null, expires_at: null })
  t.ok('option_id' in shown && 'to_zone_name' in shown, 'null fields are present, not omitted')
  t.same(buildCatalog(null, 'NGN').rate_cards, [])
  const catalog = buildCatalog(card(), 'NGN')
  t.match(catalog, { currency: 'NGN', rate_card_id: card().rateCardId, version: 3, updated_at: '2026-11-22T10:00:00.000Z', zones: ['Alpha', 'Beta'] })
  t.same(catalog.rate_cards.map((group) => [group.vehicle_type, group.delivery_mode, group.options.map((o) => o.id)]), [
    ['bike', 'MOTORBIKE', ['opt_BIKE5', 'opt_BIKE10', 'opt_BIKE20']],
    ['bus_van', 'BUS_VAN', ['opt_VAN']],
    ['truck', 'TRUCK', ['opt_TRUCK']],
  ])
  t.same(catalog.rate_cards[0].options[0], { id: 'opt_BIKE5', label: 'Up to 5 kg', min_weight_kg: 0, max_weight_kg: 5 })
})

t.test('quoter caches: concurrent misses share one load; invalidations drop only what changed', async (t) => {
  let cardLoads = 0
  let rateLoads = 0
  let release: () => void = () => {}
  let gate: Promise<void> | null = null
  const quoter = createQuoter(
    {
      async loadCardForBusiness() {
        cardLoads++
        if (gate) await gate
        return card()
      },
      async loadPlatformRates() {
        rateLoads++
        return RATES
      },
    },
    { geocoder: { locate: async () => ALPHA_POINT }, distance: { measure: async () => 3 }, serviceArea: NIGERIA, currency: 'NGN' },
    60_000,
  )
  const input = { pickup_address: 'a', dropoff_address: 'b', weight: 2, vehicle_type: 'bike' as const }
  await Promise.all([quoter.quote('biz-1', input), quoter.quote('biz-1', input), quoter.catalog('biz-1')])
  t.equal(cardLoads, 1, 'one load for three concurrent callers')
  t.equal(rateLoads, 1)
  await quoter.quote('biz-1', input)
  t.equal(cardLoads, 1, 'steady state reads nothing')
  quoter.invalidate({ kind: 'business', businessId: 'biz-2' })
  quoter.invalidate({ kind: 'rate-card', rateCardId: '00000000-0000-4000-8000-00000000ffff' })
  await quoter.quote('biz-1', input)
  t.equal(cardLoads, 1, 'another business or card leaves the entry alone')
  quoter.invalidate({ kind: 'rate-card', rateCardId: card().rateCardId })
  await quoter.quote('biz-1', input)
  t.equal(cardLoads, 2, 'the changed card is read again')

  quoter.invalidate({ kind: 'business', businessId: 'biz-1' })
  gate = new Promise((resolve) => { release = resolve })
  const inFlight = quoter.quote('biz-1', input)
  quoter.invalidate({ kind: 'rate-card', rateCardId: card().rateCardId })
  release()
  await inFlight
  gate = null
  await quoter.quote('biz-1', input)
  t.equal(cardLoads, 4, 'a load overtaken by an invalidation is not kept')
  quoter.invalidate({ kind: 'platform-rates' })
  await quoter.quote('biz-1', input)
  t.equal(rateLoads, 2)
  quoter.reset()
  await quoter.quote('biz-1', input)
  t.same([cardLoads, rateLoads], [5, 3], 'reset drops everything')
})
