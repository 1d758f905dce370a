import { DEFAULT_PLATFORM_RATES } from '../../../shared/db/platform-rates.js'
import t from 'tap'
import { ConfigError, loadConfig, pricingEnv } from '../../../shared/config.js'
import { PricingError } from '../../../shared/errors/pricing-error.js'
import { locateInGazetteer } from '../../../shared/geo/gazetteer.js'
import { haversineDistance } from '../../../shared/pricing/distance.js'
import { locateForPricing, priceLocated, type QuoteInput } from '../../../shared/pricing/pipeline.js'
import { quoteWith, type QuoteTools } from '../../../shared/pricing/quoter.js'
import { priceKey, type PlatformRates, type RateCard } from '../../../shared/courier.js'
import { TEST_SECRETS } from '../../helpers/db.js'

const rect = (w: number, s: number, e: number, n: number): [number, number][] => [[w, s], [e, s], [e, n], [w, n], [w, s]]
const NIGERIA = { minLat: 4, minLng: 2.5, maxLat: 14, maxLng: 15 }
const RATES: PlatformRates = DEFAULT_PLATFORM_RATES
const IKEJA = locateInGazetteer('Ikeja')!
const KANO = locateInGazetteer('Kano')!
const ACCRA = { lat: 5.6037, lng: -0.187 }

// South and North cover the whole service area; the truck goes North to South only.
const CARD: RateCard = {
  rateCardId: '00000000-0000-4000-8000-000000000001',
  name: 'Country',
  version: 1,
  versionId: '00000000-0000-4000-8000-000000000002',
  currency: 'NGN',
  updatedAt: new Date('2026-11-22T10:00:00.000Z'),
  zones: [{ name: 'South', polygon: rect(2.5, 4, 15, 9) }, { name: 'North', polygon: rect(2.5, 9, 15, 14) }],
  options: [
    { id: 'opt_BIKE', vehicleType: 'bike', label: 'Up to 20 kg', minWeightKg: 0, maxWeightKg: 20, prices: new Map([['South', 'North'], ['South', 'South'], ['North', 'South']].map(([a, b]) => [priceKey(a, b), 150_000])) },
    { id: 'opt_TRUCK', vehicleType: 'truck', label: '5-tonne truck', minWeightKg: null, maxWeightKg: 5000, prices: new Map([[priceKey('North', 'South'), 4_500_000]]) },
  ],
}

/** Tools whose geocoder knows the gazetteer and counts its calls. */
function tools(): QuoteTools & { geocoded: () => number } {
  let calls = 0
  return {
    geocoder: { locate: async (address: string) => (calls++, locateInGazetteer(address)) },
    distance: haversineDistance,
    serviceArea: NIGERIA,
    currency: 'NGN',
    geocoded: () => calls,
  }
}

const ikejaToKano = (fields: Partial<QuoteInput> = {}): QuoteInput => ({ pickup_address: 'Ikeja', dropoff_address: 'Kano', weight: 2, vehicle_type: 'bike', ...fields })

async function refusal(input: QuoteInput, card: RateCard | null = CARD, rates: PlatformRates = RATES, using: QuoteTools = tools()): Promise<string> {
  try {
    await quoteWith(input, card, rates, using)
    return 'priced'
  } catch (err) {
    if (err instanceof PricingError) return err.message
    throw err
  }
}

t.test('local means local: Ikeja to Kano by bike is refused, and priced once the limit allows it', async (t) => {
  t.equal(await refusal(ikejaToKano()), 'distance 1080.66 km exceeds the 80 km limit of local delivery')
  t.equal(await refusal(ikejaToKano({ vehicle_type: undefined })), 'distance 1080.66 km exceeds the 80 km limit of local delivery', 'distance pricing too')
  const far = (await quoteWith(ikejaToKano(), CARD, { ...RATES, maxDistanceKm: 2000 }, tools())).quote
  t.match(far, { distanceKm: 1080.66, price: 150_000, optionId: 'opt_BIKE', fromZoneName: 'South', toZoneName: 'North' })
  t.equal(await refusal(ikejaToKano(), CARD, { ...RATES, maxDistanceKm: 1000.5 }), 'distance 1080.66 km exceeds the 1000.5 km limit of local delivery', 'the limit as given')
})

t.test('the limit itself is local; two decimals are always printed', async (t) => {
  const measuring = (km: number): QuoteTools => ({ ...tools(), distance: { measure: async () => km } })
  const pinned = { pickup_latitude: 6.5, pickup_longitude: 3.35, dropoff_latitude: 6.6, dropoff_longitude: 3.35 }
  t.equal(await refusal(ikejaToKano(pinned), CARD, RATES, measuring(80)), 'priced', 'exactly 80 km is within 80')
  t.equal(await refusal(ikejaToKano(pinned), CARD, RATES, measuring(80.01)), 'distance 80.01 km exceeds the 80 km limit of local delivery')
  t.equal(await refusal(ikejaToKano(pinned), CARD, RATES, measuring(81)), 'distance 81.00 km exceeds the 80 km limit of local delivery')
})

t.test('service area: either end outside the box is refused, pickup first; the edge is inside', async (t) => {
  const at = (pickup: { lat: number; lng: number }, dropoff: { lat: number; lng: number }) =>
    ikejaToKano({ vehicle_type: undefined, pickup_latitude: pickup.lat, pickup_longitude: pickup.lng, dropoff_latitude: dropoff.lat, dropoff_longitude: dropoff.lng })
  const wide = { ...RATES, maxDistanceKm: 5000 }
  t.equal(await refusal(at(ACCRA, IKEJA), CARD, wide), 'pickup point is outside the service area')
  t.equal(await refusal(at(IKEJA, ACCRA), CARD, wide), 'dropoff point is outside the service area')
  t.equal(await refusal(at(ACCRA, ACCRA), CARD, wide), 'pickup point is outside the service area')
  t.equal(await refusal(at({ lat: 4, lng: 2.5 }, { lat: 14, lng: 15 }), CARD, wide), 'priced', 'corners of the box are inside')
  t.equal(await refusal(at({ lat: 3.99, lng: 8 }, IKEJA), CARD, wide), 'pickup point is outside the service area')
})

t.test('refusal order: option rules, no card, geocoding, service area, option, zones, zone price, distance', async (t) => {
  const noCard = tools()
  t.equal(await refusal(ikejaToKano({ option_id: 'opt_BIKE' }), null, RATES, noCard), 'option_id must be omitted for bike; the band is chosen by weight', 'option rules before no card')
  t.equal(await refusal(ikejaToKano({ vehicle_type: 'truck' }), null), 'option_id is required when vehicle_type is truck')
  t.equal(await refusal(ikejaToKano({ vehicle_type: undefined, option_id: 'opt_TRUCK' }), null), 'vehicle_type is required when option_id is sent')
  t.equal(await refusal(ikejaToKano({ dropoff_address: 'Qwzx Plaza' }), null, RATES, noCard), 'No rate card is enabled for this account', 'no card before geocoding')
  t.equal(noCard.geocoded(), 0, 'nothing was geocoded for an account without a card')
  t.equal(await refusal(ikejaToKano({ pickup_latitude: ACCRA.lat, pickup_longitude: ACCRA.lng, dropoff_address: 'Qwzx Plaza' })), 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude', 'geocoding before service area')
  t.equal(await refusal(ikejaToKano({ weight: 25, pickup_latitude: ACCRA.lat, pickup_longitude: ACCRA.lng })), 'pickup point is outside the service area', 'service area before the band')
  t.equal(await refusal(ikejaToKano({ vehicle_type: 'truck', option_id: 'opt_GONE' })), 'option_id opt_GONE is not in your rate card for truck; read GET /business/rate-cards again', 'option before distance')
  t.equal(await refusal(ikejaToKano({ weight: 25 })), 'weight exceeds the largest bike band (20 kg); use bus_van or truck', 'band before distance')
  const smallCard = { ...CARD, zones: [CARD.zones[0]] }
  t.equal(await refusal(ikejaToKano({ weight: 25 }), smallCard), 'weight exceeds the largest bike band (20 kg); use bus_van or truck', 'band before zones')
  t.equal(await refusal(ikejaToKano(), smallCard), 'dropoff point is outside the service zones of your rate card', 'zones before distance')
  t.equal(await refusal(ikejaToKano({ vehicle_type: 'truck', option_id: 'opt_TRUCK' })), '5-tonne truck has no price from South to North', 'zone price before distance')
  t.equal(await refusal(ikejaToKano({ vehicle_type: 'truck', option_id: 'opt_TRUCK', pickup_address: 'Kano', dropoff_address: 'Ikeja' })), 'distance 1080.66 km exceeds the 80 km limit of local delivery', 'distance last')
})

t.test('locating and pricing are two steps: the card read later still decides', async (t) => {
  const located = await locateForPricing(ikejaToKano(), { hasCard: true, roadFactor: 1.3 }, tools())
  t.same(located, { pickup: IKEJA, dropoff: KANO, distanceKm: 1080.66 })
  t.throws(() => priceLocated(ikejaToKano(), located, null, RATES, 'NGN'), { message: 'No rate card is enabled for this account' }, 'a card disabled in between is refused')
  t.equal(priceLocated(ikejaToKano(), located, CARD, { ...RATES, maxDistanceKm: 2000 }, 'NGN').price, 150_000, 'the rates passed to pricing decide the limit')
})

t.test('SERVICE_AREA_BBOX: Nigeria by default, validated at start', async (t) => {
  t.same(loadConfig(pricingEnv, { ...TEST_SECRETS }).SERVICE_AREA_BBOX, NIGERIA)
  t.same(loadConfig(pricingEnv, { ...TEST_SECRETS, SERVICE_AREA_BBOX: '6, 3 ,7,4' }).SERVICE_AREA_BBOX, { minLat: 6, minLng: 3, maxLat: 7, maxLng: 4 })
  for (const bad of ['4,2.5,14', '4,2.5,14,15,16', 'a,b,c,d', '4,,14,15', '14,2.5,4,15', '4,2.5,95,15']) {
    t.throws(() => loadConfig(pricingEnv, { ...TEST_SECRETS, SERVICE_AREA_BBOX: bad }), ConfigError, `${bad} is refused`)
  }
})
