import { Redis } from 'ioredis'
import t from 'tap'
import { changePlatformRates } from '../../shared/pricing/platform-rates.js'
import { importRateCard } from '../../shared/pricing/rate-card-file.js'
import { locateInGazetteer } from '../../shared/geo/gazetteer.js'
import { invalidationChannel, publishInvalidation } from '../../shared/invalidation.js'
import { roadDistanceKm } from '../../shared/pricing/distance.js'
import { demoCardFile, seedAccount } from '../helpers/accounts.js'
import { TEST_INTERNAL_TOKEN, useTestDb } from '../helpers/db.js'
import { startSilentServer, waitForValue } from '../helpers/processes.js'
import { startPricing } from '../helpers/stack.js'

const LEKKI = '12 Admiralty Way, Lekki Phase 1'
const IKEJA = '5 Allen Avenue, Ikeja'

t.test('pricing service', async (t) => {
  const db = await useTestDb(t)
  // Built as production builds it, with its own pool; a long TTL so only invalidations refresh the cache.
  const { app } = await startPricing({ ...db.env, RATE_CARD_CACHE_TTL_S: '300' })
  t.teardown(() => app.close())
  const { config } = db
  const publisher = new Redis(config.REDIS_URL)
  t.teardown(() => publisher.quit())

  const cardName = 'Service Card'
  const account = await seedAccount(db.sql, { card: { ...demoCardFile(), name: cardName } })
  const bare = await seedAccount(db.sql, { card: null, name: 'No Card Ltd' })
  const internal = { authorization: `Bearer ${TEST_INTERNAL_TOKEN}` }
  const quote = (businessId: string, request: Record<string, unknown>) => app.inject({ method: 'POST', url: '/internal/quote', headers: internal, payload: { business_id: businessId, request } })
  const catalogOf = (businessId: string) => app.inject({ url: `/internal/catalog/${businessId}`, headers: internal })

  t.test('health and readiness', async (t) => {
    t.same((await app.inject('/healthz')).json(), { status: 'ok' })
    t.equal((await app.inject('/readyz')).statusCode, 200)
  })

  t.test('internal routes answer only the holder of INTERNAL_TOKEN', async (t) => {
    const payload = { business_id: bare.businessId, request: { pickup_address: 'Lekki', dropoff_address: 'Ikeja', weight: 2 } }
    for (const headers of [{}, { authorization: 'Bearer wrong-token-of-some-length' }, { authorization: TEST_INTERNAL_TOKEN }, { authorization: `Bearer ${TEST_INTERNAL_TOKEN}x` }]) {
      const refused = await app.inject({ method: 'POST', url: '/internal/quote', headers, payload })
      t.equal(refused.statusCode, 401, `quote refused with ${JSON.stringify(headers)}`)
      t.match(refused.json(), { statusCode: 401, path: '/internal/quote', message: 'Invalid internal token' })
      t.equal((await app.inject({ url: `/internal/catalog/${bare.businessId}`, headers })).statusCode, 401, 'and the catalog')
    }
  })

  t.test('rate-card quote from addresses', async (t) => {
    const response = await quote(account.businessId, { pickup_address: LEKKI, dropoff_address: IKEJA, weight: 3000, vehicle_type: 'truck', option_id: account.options['5-tonne truck'] })
    t.equal(response.statusCode, 200)
    const km = roadDistanceKm(locateInGazetteer(LEKKI)!, locateInGazetteer(IKEJA)!, 1.3)
    t.same(response.json(), { price: 112500, distance_km: km, currency: 'NGN', pricing_model: 'rate_card', option_id: account.options['5-tonne truck'], option_label: '5-tonne truck', delivery_mode: 'TRUCK', from_zone_name: 'Lekki', to_zone_name: 'Ikeja', quote_id: response.json().quote_id, expires_at: response.json().expires_at })
    t.match(response.json(), { quote_id: /^qt_[0-9A-Z]{16}$/, expires_at: /^\d{4}-\d\d-\d\dT/ }, 'held')
  })

  t.test('distance quote from coordinates', async (t) => {
    const ends = { pickup_latitude: 6.5, pickup_longitude: 3.35, dropoff_latitude: 6.6, dropoff_longitude: 3.35 }
    const response = await quote(bare.businessId, { pickup_address: 'ignored', dropoff_address: 'ignored', weight: 2, ...ends })
    const km = roadDistanceKm({ lat: 6.5, lng: 3.35 }, { lat: 6.6, lng: 3.35 }, 1.3)
    t.equal(response.statusCode, 200)
    t.same(response.json(), { price: Math.round(50000 + 12000 * km + 5000 * 2) / 100, distance_km: km, currency: 'NGN', pricing_model: 'distance', option_id: null, option_label: null, delivery_mode: 'MOTORBIKE', from_zone_name: null, to_zone_name: null, quote_id: response.json().quote_id, expires_at: response.json().expires_at })
    t.match(response.json(), { quote_id: /^qt_[0-9A-Z]{16}$/, expires_at: /^\d{4}-\d\d-\d\dT/ }, 'held')
  })

  t.test('refusals are 400 {message}', async (t) => {
    const refused = async (businessId: string, request: Record<string, unknown>) => {
      const response = await quote(businessId, { pickup_address: LEKKI, dropoff_address: IKEJA, weight: 2, ...request })
      t.equal(response.statusCode, 400)
      return response.json().message
    }
    t.equal(await refused(bare.businessId, { vehicle_type: 'bike' }), 'No rate card is enabled for this account')
    t.equal(await refused(account.businessId, { vehicle_type: 'truck', option_id: 'opt_0000000000AA' }), 'option_id opt_0000000000AA is not in your rate card for truck; read GET /business/rate-cards again')
    t.equal(await refused(account.businessId, { vehicle_type: 'bike', dropoff_address: '22 Zoo Road, Kano' }), 'dropoff point is outside the service zones of your rate card')
    t.equal(await refused(account.businessId, { dropoff_address: 'Nowhere Lane' }), 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude')
    t.equal(await refused(account.businessId, { weight: 0.05 }), 'weight must not be less than 0.1', 'the request is validated again')
  })

  t.test('catalog', async (t) => {
    const catalog = (await catalogOf(account.businessId)).json()
    t.match(catalog, { currency: 'NGN', rate_card_id: account.card!.rate_card_id, version: 1, zones: ['Island', 'Lekki', 'Mainland', 'Ikeja'] })
    t.same(catalog.rate_cards.map((group: any) => [group.vehicle_type, group.options.map((option: any) => option.id)]), [
      ['bike', [account.options['Up to 5 kg'], account.options['5 to 10 kg'], account.options['10 to 20 kg']]],
      ['bus_van', [account.options['Mini van']]],
      ['truck', [account.options['5-tonne truck']]],
    ])
    t.same((await catalogOf(bare.businessId)).json().rate_cards, [])
  })

  t.test('a re-import is served from cache until its invalidation, then the old id is refused', async (t) => {
    const channel = invalidationChannel(config.QUEUE_PREFIX)
    const subscribed = await waitForValue(async () => ((await publisher.pubsub('NUMSUB', channel)) as [string, number])[1], (count) => count >= 1, 10_000)
    t.ok(subscribed.held, 'pricing subscribes to invalidations')
    const oldTruck = account.options['5-tonne truck']
    const truckQuote = () => quote(account.businessId, { pickup_address: LEKKI, dropoff_address: IKEJA, weight: 3000, vehicle_type: 'truck', option_id: oldTruck })
    const reimported = await importRateCard(db.sql, { ...demoCardFile(), name: cardName }, 'NGN')
    t.equal((await truckQuote()).statusCode, 200, 'the cached card still answers: no database read per quote')

    await publishInvalidation(publisher, config.QUEUE_PREFIX, { kind: 'rate-card', rateCardId: reimported.rate_card_id })
    // How fast is the bench's business (docs/contracts.md); here the refusal must come, well within 10 s.
    const { held, value: response } = await waitForValue(truckQuote, (r) => r.statusCode !== 200, 10_000)
    t.ok(held, 'the old id is refused once the invalidation arrives')
    t.equal(response.statusCode, 400)
    t.match(response.json().message, `option_id ${oldTruck} is not in your rate card for truck`)
    const newTruck = reimported.options.find((option) => option.label === '5-tonne truck')!.id
    t.equal((await quote(account.businessId, { pickup_address: LEKKI, dropoff_address: IKEJA, weight: 3000, vehicle_type: 'truck', option_id: newTruck })).statusCode, 200)
    t.equal((await catalogOf(account.businessId)).json().version, 2)

    const distanceQuote = async () => (await quote(bare.businessId, { pickup_address: 'a b c', dropoff_address: 'a b c', weight: 1, pickup_latitude: 6.5, pickup_longitude: 3.35, dropoff_latitude: 6.5, dropoff_longitude: 3.35 })).json().price
    t.equal(await distanceQuote(), 1000, 'minimum fare')
    await changePlatformRates(db.sql, { minFare: 1500 })
    await publishInvalidation(publisher, config.QUEUE_PREFIX, { kind: 'platform-rates' })
    const rates = await waitForValue(distanceQuote, (price) => price === 1500, 10_000)
    t.equal(rates.value, 1500, 'new platform rates apply after their invalidation')
  })

  // A geocoder that accepts the connection and never answers, its own timeout longer than the request's.
  t.test('a quote that waits past REQUEST_TIMEOUT_MS answers 503 with the error body, not 500', async (t) => {
    const silent = await startSilentServer(t)
    const slow = await startPricing({ ...db.env, GEOCODER: 'nominatim', NOMINATIM_URL: silent.url, GEOCODER_TIMEOUT_MS: '600000', REQUEST_TIMEOUT_MS: '500' })
    t.teardown(() => slow.app.close())
    const payload = { business_id: bare.businessId, request: { pickup_address: '1 Nowhere Lane', dropoff_address: '2 Nowhere Lane', weight: 2 } }
    const answer = await Promise.race([
      slow.app.inject({ method: 'POST', url: '/internal/quote', headers: internal, payload }),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
    ])
    t.ok(answer, 'answered, not left waiting for the geocoder')
    t.equal(answer?.statusCode, 503)
    t.match(answer?.json(), { statusCode: 503, path: '/internal/quote', message: 'Pricing is temporarily unavailable' })
    silent.hangUp()
  })
})
