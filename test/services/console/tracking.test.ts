import t from 'tap'
import { Redis } from 'ioredis'
import { recordFix, setShift } from '../../../shared/couriers/positions.js'
import { eraseOrders } from '../../../shared/db/personal-data.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { newTrackingToken } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder, startConsole } from '../../helpers/console.js'
import { useTestDb } from '../../helpers/db.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { consoleEnv, loadConfig } from '../../../shared/config.js'

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
  const { courier } = await createdCourier(sql, { name: 'Musa Bello', phone: '+2348095550000', vehiclePlate: 'LSR-1' })
  await setShift(redis, db.env.QUEUE_PREFIX!, courier, 'available')
  await recordFix(redis, db.env.QUEUE_PREFIX!, courier, { latitude: 6.45, longitude: 3.46, at: new Date().toISOString() })
  const waiting = await open(token)
  t.equal(waiting.statusCode, 200)
  t.match(waiting.body, 'Your order is waiting for a courier')
  // DESIGN 14: the PIN whenever the order asks for one, from the first look at the page (a
  // recipient told it early has it at the door, whoever comes).
  t.match(waiting.body, /<p class="pin">4821<\/p>/, 'the PIN while it waits for a courier')

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
  // The recipient's clock (TRACKING_TIME_ZONE, Africa/Lagos by default), named: not UTC.
  t.match(page.body, /Expected at the pickup around <strong>\d\d:\d\d WAT<\/strong>/)
  t.match(page.body, /<li>assigned, \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d WAT<\/li>/, 'the history in the same clock')
  t.match(page.body, /Your courier was last at 6\.4500, 3\.4600, at \d\d:\d\d WAT\./, "the courier's position (no tiles: in words)")
  // Nothing of the addresses: a forwarded link tells no one where the recipient lives.
  for (const secret of ['Bello', '+2348095550000', '1500', 'Chidi Okafor', 'Okafor', 'LSR-1', '6.6018', '3.3515', '6.4413', '3.4714', '<svg', 'Pickup']) t.notMatch(page.body, secret, `never ${secret}`)
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

t.test('with TRACKING_MAP_TILES_URL the courier sits on map tiles, and the page may load only those', async (t) => {
  const tiled = await startConsole(t, db.env, { TRACKING_MAP_TILES_URL: 'https://tiles.example.org/{z}/{x}/{y}.png', TRACKING_MAP_ATTRIBUTION: '© Example Tiles' })
  const { orderId, token } = await trackedOrder()
  const { courier } = await createdCourier(sql, { name: 'Tayo Ade', phone: '+2348095550001' })
  await recordFix(redis, db.env.QUEUE_PREFIX!, courier, { latitude: 6.45, longitude: 3.46, at: new Date().toISOString() })
  t.equal((await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(courier), reason: null })).kind, 'changed')

  const page = await tiled.app.inject({ method: 'GET', url: `/t/${token}` })
  t.equal(page.statusCode, 200)
  const tiles = [...page.body.matchAll(/<image href="https:\/\/tiles\.example\.org\/(\d+)\/(\d+)\/(\d+)\.png"/g)].map((m) => m.slice(1).map(Number))
  t.ok(tiles.length >= 2 && tiles.length <= 6, `a few tiles cover the 320×220 map (${tiles.length})`)
  const [z] = tiles[0]!
  t.ok(tiles.every(([zoom]) => zoom === z) && z! >= 10 && z! <= 17, `one city-level zoom (${z})`)
  // The courier's fix, in that zoom's tile grid: one of the tiles drawn is under it.
  const size = 2 ** z!
  const lat = (6.45 * Math.PI) / 180
  const under = [Math.floor(((3.46 + 180) / 360) * size), Math.floor(((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * size)]
  t.ok(tiles.some(([, x, y]) => x === under[0] && y === under[1]), 'the tile under the courier is drawn')
  t.match(page.body, />Courier<\/text>/)
  t.equal([...page.body.matchAll(/<circle /g)].length, 1, 'the courier is the one marker')
  t.match(page.body, '© Example Tiles', 'the tiles are attributed')
  t.match(page.headers['content-security-policy'], /img-src 'self' data: https:\/\/tiles\.example\.org(;|$)/, 'images from the tile server only')
  t.match(page.headers['content-security-policy'], /script-src 'none'/, 'the rest of the policy stays')

  const plain = await open(token)
  t.notMatch(plain.body, '<image', 'unset: the plain SVG, nothing fetched from elsewhere')
  t.notMatch(plain.headers['content-security-policy'], 'tiles.example.org')
  t.throws(() => loadConfig(consoleEnv, { ...db.env, CONSOLE_SESSION_SECRET: 'x'.repeat(32), TRACKING_MAP_TILES_URL: 'https://tiles.example.org/tile.png' }), /TRACKING_MAP_TILES_URL: must contain \{z\}, \{x\} and \{y\}/)
})

t.test('an ETA already past is not shown; the times follow TRACKING_TIME_ZONE', async (t) => {
  const { orderId, token } = await trackedOrder()
  const { courier } = await createdCourier(sql, { name: 'Quiet Phone', phone: '+2348095550002' })
  t.equal((await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(courier), reason: null })).kind, 'changed')
  // Last heard from an hour ago, a few minutes' ride from the pickup: that ETA is long gone.
  await recordFix(redis, db.env.QUEUE_PREFIX!, courier, { latitude: 6.45, longitude: 3.46, at: new Date(Date.now() - 3600_000).toISOString() })
  const page = await open(token)
  t.equal(page.statusCode, 200)
  t.match(page.body, 'A courier is on the way to pick up your parcel')
  t.notMatch(page.body, 'Expected at the', 'no promise already broken')
  t.match(page.body, 'Your courier was last at', 'the page still shows where the courier was last heard from')
  // At the pickup, heard from half a minute ago: the ETA (the fix's time) has just passed, and is now.
  await recordFix(redis, db.env.QUEUE_PREFIX!, courier, { latitude: 6.4413, longitude: 3.4714, at: new Date(Date.now() - 30_000).toISOString() })
  t.match((await open(token)).body, /Expected at the pickup around <strong>\d\d:\d\d WAT<\/strong>/, 'a courier at the door is expected now')

  const utc = await startConsole(t, db.env, { TRACKING_TIME_ZONE: 'UTC' })
  t.match((await utc.app.inject({ method: 'GET', url: `/t/${token}` })).body, /<li>assigned, \d{1,2} [A-Z][a-z]{2}, \d\d:\d\d UTC<\/li>/)
  t.throws(() => loadConfig(consoleEnv, { ...db.env, CONSOLE_SESSION_SECRET: 'x'.repeat(32), TRACKING_TIME_ZONE: 'Lagos' }), /TRACKING_TIME_ZONE: must be an IANA time zone, such as Africa\/Lagos/)
})
