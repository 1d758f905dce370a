import t from 'tap'
import { insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift, placeOrders } from '../../helpers/couriers.js'
import { startBuiltService, startOwnRedis } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { startStack } from '../../helpers/stack.js'

// Redis out of reach while a rider works: what needs only Postgres goes on (the offers, an accept,
// a pickup, a delivery at the door), and what cannot do without Redis (the shift, a location
// ping, the profile with its shift) answers 503 in the spec's error body, never a 500.
const redis = await startOwnRedis(t)
const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url } })
// A worker process of its own, killed at the end: a BullMQ worker's close can hang on a Redis gone.
startBuiltService(t, 'services/placement-worker/main.js', { ...db.env, REDIS_URL: redis.url, WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
const account = await seedAccount(db.sql, { balance: 1_000_000 })

t.test('a rider goes on with their orders while Redis is down; the steps that need it answer 503', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Outage Rider', ISLAND)
  const [orderId] = await placeOrders(gateway, account.apiKey, [shipment()])
  const offer = await insertOffer(db.sql, { id: newOfferId(), orderId: orderId!, courierId: rider.id, offerS: 600 })
  await redis.stop()

  const courier = (method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) => gateway.inject({ method, url: `/v2/courier${url}`, headers: rider.auth, ...(payload && { payload }) })
  const offers = await courier('GET', '/offers')
  t.equal(offers.statusCode, 200, offers.body)
  t.match(offers.json().data, [{ offer_id: offer!.id, distance_to_pickup_km: null }], 'the offer is listed, without the distance Redis would give')
  for (const step of ['/offers/' + offer!.id + '/accept', `/orders/${orderId}/pickup`]) {
    const answer = await courier('POST', step)
    t.equal(answer.statusCode, 200, `${step}: ${answer.body}`)
  }
  const delivered = await courier('POST', `/orders/${orderId}/deliver`, {})
  t.equal(delivered.statusCode, 200, delivered.body)
  t.match(delivered.json(), { status: 'delivered' }, 'delivered at the door')

  for (const [method, url, payload] of [['GET', '/me'], ['POST', '/shift', { status: 'offline' }], ['POST', '/location', { latitude: ISLAND.lat, longitude: ISLAND.lng }]] as const) {
    const answer = await courier(method, url, payload)
    t.equal(answer.statusCode, 503, `${url}: ${answer.body}`)
    t.match(answer.json(), { statusCode: 503, message: 'Service temporarily unavailable, retry shortly', path: `/v2/courier${url}` }, `${url}: the spec's error body`)
  }
})
