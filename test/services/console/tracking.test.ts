import t from 'tap'
import { Redis } from 'ioredis'
import { createCourier } from '../../../shared/couriers/accounts.js'
import { recordFix, setShift } from '../../../shared/couriers/positions.js'
import { eraseOrders } from '../../../shared/db/personal-data.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { newTrackingToken } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder, startConsole } from '../../helpers/console.js'
import { useTestDb } from '../../helpers/db.js'

// The recipient's tracking page (DESIGN 14), served by the console without a login: what it
// shows (status, history, the courier's first name and vehicle, position and ETA while on the
// way, the PIN) and what it never does (phone, price, full name); 404 when unknown, erased or
// seven days after the order came to rest.
const db = await useTestDb(t)
const { sql } = db
const { app } = await startConsole(t, db.env)
const account = await seedAccount(sql, { name: 'Ada Stores' })
const redis = new Redis(db.env.REDIS_URL)
t.teardown(() => redis.disconnect())

async function trackedOrder(): Promise<{ orderId: string; token: string }> {
  const orderId = await seedOrder(sql, account.businessId)
  const token = newTrackingToken()
  await sql`update orders set tracking_token = ${token}, tracking_url = ${`http://localhost:3004/t/${token}`}, delivery_pin = '4821' where id = ${orderId}`
  return { orderId, token }
}
const open = (token: string) => app.inject({ method: 'GET', url: `/t/${token}` })

t.test('on its way: status, first name and vehicle, the map and ETA, the PIN; nothing else', async (t) => {
  const { orderId, token } = await trackedOrder()
  const { courier } = await createCourier(sql, 'test', { name: 'Musa Bello', phone: '+2348095550000', vehicleType: 'bike', vehiclePlate: 'LSR-1', maxWeightKg: null })
  await setShift(redis, db.env.QUEUE_PREFIX!, courier.id, 'available')
  await recordFix(redis, db.env.QUEUE_PREFIX!, courier.id, { latitude: 6.45, longitude: 3.46, at: new Date().toISOString() })
  const waiting = await open(token)
  t.equal(waiting.statusCode, 200)
  t.match(waiting.body, 'Your order is waiting for a courier')
  t.notMatch(waiting.body, 'PIN', 'no PIN before a courier is on the way')

  t.equal((await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(courier), reason: null })).kind, 'changed')
  const page = await open(token)
  t.equal(page.statusCode, 200)
  t.equal(page.headers['x-robots-tag'], 'noindex, nofollow', 'kept out of search engines by header')
  t.match(page.body, '<meta name="robots" content="noindex, nofollow">')
  t.match(page.body, /<meta http-equiv="refresh" content="\d+">/, 'it refreshes itself')
  t.match(page.body, '<meta name="viewport" content="width=device-width, initial-scale=1">')
  t.match(page.body, 'A courier is on the way to pick up your parcel')
  t.match(page.body, 'Your courier: <strong>Musa</strong>, by motorbike')
  t.match(page.body, /<p class="pin">4821<\/p>/, 'the PIN to give the courier')
  t.match(page.body, /Expected at the pickup around <strong>\d\d:\d\d UTC<\/strong>/)
  t.match(page.body, /<svg[^>]*>[\s\S]*>Pickup<\/text>[\s\S]*>You<\/text>[\s\S]*>Courier<\/text>/, 'the pickup, the address and the courier on the map')
  for (const secret of ['Bello', '+2348095550000', '1500', 'Chidi Okafor', 'Okafor', 'LSR-1']) t.notMatch(page.body, secret, `never ${secret}`)
})

t.test('404: unknown, malformed, erased, or seven days after the order came to rest', async (t) => {
  t.equal((await open(newTrackingToken())).statusCode, 404, 'a well-formed token of no order')
  t.equal((await open('not-a-token')).statusCode, 404, 'a malformed one')
  const erased = await trackedOrder()
  t.equal((await open(erased.token)).statusCode, 200)
  await sql.begin((tx) => eraseOrders(tx, { orderIds: [erased.orderId] }, ['recipient_name']))
  const afterErasure = await open(erased.token)
  t.equal(afterErasure.statusCode, 404, 'erasure ends the page')
  t.match(afterErasure.headers['x-robots-tag'], 'noindex')

  const rested = await trackedOrder()
  t.equal((await changeOrder(sql, { orderId: rested.orderId, scope: null }, { kind: 'cancel', by: 'operator', reason: null })).kind, 'changed')
  t.match((await open(rested.token)).body, 'This delivery was cancelled', 'a cancelled order still shows')
  await sql`update orders set updated_at = now() - interval '7 days 1 minute' where id = ${rested.orderId}`
  t.equal((await open(rested.token)).statusCode, 404, 'seven days after coming to rest it ends')
})
