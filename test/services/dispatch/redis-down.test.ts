import { Redis } from 'ioredis'
import t from 'tap'
import { issueLoginCode } from '../../../shared/couriers/login.js'
import { insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, startConsole } from '../../helpers/console.js'
import { onShift, placeOrders } from '../../helpers/couriers.js'
import { freePort, startBuiltService, startOwnRedis } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { startStack } from '../../helpers/stack.js'

// Redis out of reach while riders work: what needs only Postgres goes on (the offers, an accept,
// a pickup, a delivery at the door, through the API and the web app), and what cannot do without
// Redis (the shift, a location ping, the profile with its shift) answers 503 in the spec's error
// body, never a 500; the web app's home shows the orders and says the shift cannot be read.
const redis = await startOwnRedis(t)
const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url } })
// A worker process of its own, killed at the end: a BullMQ worker's close can hang on a Redis gone.
startBuiltService(t, 'services/placement-worker/main.js', { ...db.env, REDIS_URL: redis.url, WORKER_PORT: '0', WORKER_OPS_PORT: '0' })
const { app: consoleApp } = await startConsole(t, { ...db.env, REDIS_URL: redis.url })
const account = await seedAccount(db.sql, { balance: 1_000_000 })

// A failover's demoted primary is there and answers, but refuses writes (READONLY, or EXECABORT
// for a transaction of them): as much an outage to wait out as a Redis gone.
t.test('a Redis that answers but cannot take writes (a primary demoted in a failover) is a 503 too, and the steps work once it can', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Failover Rider', ISLAND)
  const admin = new Redis(redis.url)
  t.teardown(() => admin.disconnect())
  await admin.call('REPLICAOF', '127.0.0.1', String(await freePort()))
  const courier = (url: string, payload: Record<string, unknown>) => gateway.inject({ method: 'POST', url: `/v2/courier${url}`, headers: rider.auth, payload })
  for (const [url, payload] of [['/shift', { status: 'offline' }], ['/location', { latitude: ISLAND.lat, longitude: ISLAND.lng }]] as const) {
    const answer = await courier(url, payload)
    t.equal(answer.statusCode, 503, `${url}: ${answer.body}`)
    t.match(answer.json(), { statusCode: 503, message: 'Service temporarily unavailable, retry shortly' }, `${url}: the spec's error body`)
  }
  await admin.call('REPLICAOF', 'NO', 'ONE')
  const offShift = await courier('/shift', { status: 'offline' })
  t.equal(offShift.statusCode, 200, `promoted again: ${offShift.body}`)
})

t.test('riders go on with their orders while Redis is down; the steps that need it answer 503', async (t) => {
  const rider = await onShift(gateway, db.sql, 'Outage Rider', ISLAND)
  const webRider = await onShift(gateway, db.sql, 'Web Rider', ISLAND)
  const [orderId, webOrderId] = await placeOrders(gateway, account.apiKey, [shipment(), shipment()])
  const offer = await insertOffer(db.sql, { id: newOfferId(), orderId: orderId!, courierId: rider.id, offerS: 600 })
  const webOffer = await insertOffer(db.sql, { id: newOfferId(), orderId: webOrderId!, courierId: webRider.id, offerS: 600 })
  // The web rider's browser, logged in while Redis is up.
  const browser = new ConsoleClient(consoleApp)
  const { code } = await issueLoginCode(db.sql, webRider.id, 15)
  await browser.get('/courier/login')
  const [{ phone }] = await db.sql<{ phone: string }[]>`select phone from couriers where id = ${webRider.id}`
  t.equal((await browser.post('/courier/login', { phone, code })).statusCode, 303, 'the web rider is logged in')
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

  // The web app: its home still opens, and its steps go through.
  const home = await browser.get('/courier')
  t.equal(home.statusCode, 200)
  t.match(home.body, 'Your shift cannot be read right now', 'the home says the shift cannot be read, and shows the rest')
  for (const step of [`/courier/offers/${webOffer!.id}/accept`, `/courier/orders/${webOrderId}/pickup`, `/courier/orders/${webOrderId}/deliver`]) {
    const answer = await browser.post(step)
    t.equal(answer.statusCode, 303, `${step} goes through`)
  }
  t.match(await db.sql`select status from orders where id = ${webOrderId}`, [{ status: 'delivered' }], 'the web rider delivered it')
  const state = await browser.get('/courier/state')
  t.equal(state.statusCode, 200, 'the page script still hears the state')
  const shift = await browser.post('/courier/shift', { status: 'offline' })
  t.equal(shift.statusCode, 303)
  t.match((await browser.get('/courier')).body, 'Service temporarily unavailable, retry shortly', 'a shift change says to retry')
})
