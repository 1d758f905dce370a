import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { createCourier, disableCourierAndAnnounce } from '../../../shared/couriers/accounts.js'
import { issueLoginCode } from '../../../shared/couriers/login.js'
import { shiftOf } from '../../../shared/couriers/positions.js'
import { clearLoginFailures } from '../../../shared/db/courier-logins.js'
import { findOrderById } from '../../../shared/db/orders.js'
import { insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { REASON_MAX_LENGTH } from '../../../shared/schemas/courier.js'
import { createRedis } from '../../../shared/redis.js'
import { COURIER_LOGIN_REFUSED } from '../../../services/console/routes/courier-app.js'
import { money } from '../../../services/console/format.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, startConsole } from '../../helpers/console.js'
import { placeOrders } from '../../helpers/couriers.js'
import { pngPhoto } from '../../helpers/png.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { startStack } from '../../helpers/stack.js'
import { createdCourier, freshPhone } from '../../helpers/courier-accounts.js'

/*
 * The courier web app (DESIGN 14) over HTTP: logging in with phone and one-time code (right,
 * wrong, expired, used, replaced, locked), its sessions kept apart from the console's, CSRF on
 * every form, and a courier's whole day through its forms: shift, location, decline, accept,
 * pickup, and delivery with the PIN and a photo (refused without one, with a wrong PIN, a file
 * that is not an image, or one too large). No courier page ever holds the price or the PIN.
 */

const storage = mkdtempSync(path.join(tmpdir(), 'courier-app-photos-'))
t.teardown(() => rmSync(storage, { recursive: true, force: true }))
const stack = await startStack(t)
const { sql } = stack.db
const env = { ...stack.db.env, STORAGE_DIR: storage }
const { app, url } = await startConsole(t, env)
const account = await seedAccount(sql, { balance: 1_000_000, scopes: ['orders:write', 'orders:read'], name: 'Door Goods' })
const redis = createRedis(stack.db.config)
t.teardown(() => redis.disconnect())
const PHONE = '+2348031112222'

async function newCourier(name: string, phone = PHONE) {
  const { courier } = await createdCourier(sql, { name, phone, vehiclePlate: 'KJA-77' })
  return courier
}

/** A courier's browser, logged in with a fresh code. */
async function loggedIn(t: Test, courierId: string, phone = PHONE): Promise<ConsoleClient> {
  const client = new ConsoleClient(app)
  const { code } = await issueLoginCode(sql, courierId, 15)
  await client.get('/courier/login')
  const login = await client.post('/courier/login', { phone, code })
  t.equal(login.statusCode, 303, 'logged in')
  t.equal(login.headers.location, '/courier')
  return client
}

async function tryLogin(client: ConsoleClient, phone: string, code: string) {
  await client.get('/courier/login')
  return client.post('/courier/login', { phone, code })
}

/** A new courier with a fresh code, a browser to log in from, and a code that is not theirs: what the lock tests guess with. */
async function guessing(name: string, phone: string) {
  const courier = await newCourier(name, phone)
  const { code } = await issueLoginCode(sql, courier.id, 15)
  return { client: new ConsoleClient(app), code, wrong: code === '111111' ? '222222' : '111111' }
}

/** Posts the delivery form as a phone's browser does: multipart, the CSRF token in the action's query string. */
async function deliver(client: ConsoleClient, orderId: string, fields: { pin?: string; photo?: { bytes: Buffer; name: string; type: string } }) {
  const boundary = `----courier-test-${Math.random().toString(36).slice(2)}`
  const parts: Buffer[] = [Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="_csrf"\r\n\r\n${client.csrf}\r\n`)]
  if (fields.pin !== undefined) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="pin"\r\n\r\n${fields.pin}\r\n`))
  const photo = fields.photo ?? { bytes: Buffer.alloc(0), name: '', type: 'application/octet-stream' }
  parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="photo"; filename="${photo.name}"\r\ncontent-type: ${photo.type}\r\n\r\n`), photo.bytes, Buffer.from(`\r\n--${boundary}--\r\n`))
  return app.inject({
    method: 'POST', url: `/courier/orders/${orderId}/deliver?_csrf=${encodeURIComponent(client.csrf)}`, payload: Buffer.concat(parts),
    headers: { cookie: client.cookie ?? '', 'content-type': `multipart/form-data; boundary=${boundary}` },
  })
}

/** Runs a step's form and opens the page it leads to: the flash message shown there. */
async function flashAfter(client: ConsoleClient, answer: { statusCode: number; headers: Record<string, unknown> }): Promise<string> {
  if (answer.statusCode !== 303 || answer.headers.location !== '/courier') throw new Error(`the step answered ${answer.statusCode} → ${String(answer.headers.location)}`)
  const page = await client.get('/courier')
  return /<p class="flash (?:ok|error)" role="(?:status|alert)">([^<]*)<\/p>/.exec(page.body)?.[1]?.replace(/&#39;/g, "'") ?? ''
}

t.test('logging in: a right code once; a wrong, used, expired or replaced one refused alike', async (t) => {
  const courier = await newCourier('Ada Rider')
  const client = new ConsoleClient(app)
  const first = await issueLoginCode(sql, courier.id, 15)
  t.match(first.code, /^\d{6}$/, 'six digits')
  const [stored] = await sql<{ codeHash: string }[]>`select code_hash from courier_login_codes where courier_id = ${courier.id}`
  t.not(stored!.codeHash, first.code, 'only a hash is stored')
  t.notOk(stored!.codeHash.includes(first.code), 'the hash does not hold the code')

  const login = await client.get('/courier/login')
  t.equal(login.statusCode, 200)
  t.match(login.body, /name="phone"[^>]*type="tel"/)
  t.match(login.body, /autocomplete="one-time-code"/)

  const wrongCode = first.code === '000000' ? '000001' : '000000'
  const refusals = [
    ['wrong code', await tryLogin(client, PHONE, wrongCode)],
    ['unknown phone', await tryLogin(client, '+2348039999999', first.code)],
    ['not a code', await tryLogin(client, PHONE, 'abc')],
  ] as const
  for (const [what, answer] of refusals) {
    t.equal(answer.statusCode, 401, `${what}: 401`)
    t.ok(answer.body.includes(COURIER_LOGIN_REFUSED.replace(/'/g, '&#39;')), `${what}: the one generic message`)
    t.notOk(answer.headers['set-cookie']?.toString().includes('courier_session='), `${what}: no session`)
  }

  const second = await issueLoginCode(sql, courier.id, 15)
  t.equal((await tryLogin(client, PHONE, first.code)).statusCode, 401, 'a new code replaces the old one')
  const spaced = await tryLogin(client, '+234 803 111 2222', second.code)
  t.equal(spaced.statusCode, 303, 'the right code logs in (the phone as typed, spaces and all)')
  const home = await client.get('/courier')
  t.equal(home.statusCode, 200)
  t.match(home.body, /Ada Rider/)
  t.match(home.body, /Go available/)

  const other = new ConsoleClient(app)
  t.equal((await tryLogin(other, PHONE, second.code)).statusCode, 401, 'a code works once')

  const expiring = await issueLoginCode(sql, courier.id, 15)
  await sql`update courier_login_codes set expires_at = now() - interval '1 second' where courier_id = ${courier.id}`
  t.equal((await tryLogin(other, PHONE, expiring.code)).statusCode, 401, 'an expired code is refused')

  const logout = await client.post('/courier/logout')
  t.equal(logout.statusCode, 303)
  t.equal(logout.headers.location, '/courier/login?logged_out')
  t.equal((await client.get('/courier')).headers.location, '/courier/login', 'logged out: back to the login page')
})

t.test('a phone is one phone however it is written: stored E.164, logged in from any spelling, locked as one, held by one courier', async (t) => {
  const courier = await newCourier('Spaced Rider', '0803 111 7070')
  t.equal(courier.phone, '+2348031117070', 'stored as +234 and the ten digits')
  for (const typed of ['08031117070', '+234 803 111 7070', '0803-111-7070', '+234 (0) 803 111 7070', '+2348031117070']) {
    const { code } = await issueLoginCode(sql, courier.id, 15)
    t.equal((await tryLogin(new ConsoleClient(app), typed, code)).statusCode, 303, `'${typed}' logs in`)
  }
  // The demo rider's case: created as +234…, the rider types the number as dialled at home.
  const demoLike = await newCourier('Demo Like', '+2348031117071')
  const { code: demoCode } = await issueLoginCode(sql, demoLike.id, 15)
  t.equal((await tryLogin(new ConsoleClient(app), '0803 111 7071', demoCode)).statusCode, 303, '0… logs in a courier created as +234…')

  const phone = '+2348031118888'
  const locked = await newCourier('Mixed Forms', phone)
  const { code } = await issueLoginCode(sql, locked.id, 15)
  const wrong = code === '111111' ? '222222' : '111111'
  const client = new ConsoleClient(app)
  for (const typed of ['08031118888', '+234 803 111 8888', '0803 111 8888', '2348031118888', '+234-803-111-8888']) {
    t.equal((await tryLogin(client, typed, wrong)).statusCode, 401, `wrong code as '${typed}'`)
  }
  t.equal((await tryLogin(client, phone, code)).statusCode, 401, 'five wrong codes in five spellings lock the one phone')
  const rows = await sql<{ phone: string; locked: boolean }[]>`select phone, locked_until > now() as locked from courier_login_failures where phone like '%8031118888'`
  t.same(rows.map((row) => ({ ...row })), [{ phone, locked: true }], 'counted in one row, under the stored form')

  const twin = await createCourier(sql, 'test', { name: 'Twin', phone: '0803 111 8888', vehicleType: 'bike', vehiclePlate: null, maxWeightKg: null })
  t.same(twin, { kind: 'invalid', message: `phone ${phone} is already courier ${locked.id}'s (Mixed Forms); disable that courier first or give another number` }, 'a second enabled courier cannot take the phone, so cannot lock the first out')
  const bad = await createCourier(sql, 'test', { name: 'Nobody', phone: '123', vehicleType: 'bike', vehiclePlate: null, maxWeightKg: null })
  t.match(bad, { kind: 'invalid', message: /^phone must be a phone number: .*, got '123'$/ })
})

t.test('five wrong codes lock the phone for 15 minutes; the client address is limited too', async (t) => {
  const phone = '+2348031113333'
  const { client, code, wrong } = await guessing('Locked Rider', phone)
  for (let attempt = 1; attempt <= 5; attempt++) t.equal((await tryLogin(client, phone, wrong)).statusCode, 401, `wrong code ${attempt}`)
  const locked = await tryLogin(client, phone, code)
  t.equal(locked.statusCode, 401, 'the right code is refused while the phone is locked')
  t.ok(locked.body.includes('locked for 15 minutes'), 'with the same message as any refusal')
  const [row] = await sql<{ lockedUntil: Date }[]>`select locked_until from courier_login_failures where phone = ${phone}`
  t.ok(row!.lockedUntil.getTime() > Date.now() + 14 * 60_000, 'locked for 15 minutes')
  await sql`update courier_login_failures set locked_until = now() - interval '1 second' where phone = ${phone}`
  t.equal((await tryLogin(client, phone, code)).statusCode, 303, 'after the lock, the code still works')

  // Per address: the console's own limit (CONSOLE_LOGIN_LIMIT a minute).
  const limitedConsole = await startConsole(t, env, { CONSOLE_LOGIN_LIMIT: '3' })
  const guesser = new ConsoleClient(limitedConsole.app)
  const answers = []
  for (let attempt = 0; attempt < 4; attempt++) answers.push((await tryLogin(guesser, `+23480311144${attempt}0`, '123456')).statusCode)
  t.same(answers, [401, 401, 401, 429], 'the fourth try in a minute from one address is turned away')
})

t.test('five wrong codes within any 15 minutes lock the phone, across where a window from the first would restart', async (t) => {
  const phone = '+2348031119999'
  const { client, code, wrong } = await guessing('Sliding Rider', phone)
  const failures = async () => {
    const [row] = await sql<{ kept: number; locked: boolean }[]>`
      select cardinality(failed_login_times) as kept, coalesce(locked_until > now(), false) as locked from courier_login_failures where phone = ${phone}`
    return { ...row }
  }
  for (let attempt = 1; attempt <= 4; attempt++) t.equal((await tryLogin(client, phone, wrong)).statusCode, 401, `wrong code ${attempt}`)
  t.same(await failures(), { kept: 4, locked: false }, 'four failures kept, each with its time')
  // As if those four had been made 15 minutes and a second, 3, 2 and 1 minute ago.
  await sql`
    update courier_login_failures set failed_login_times = array[now() - interval '15 minutes 1 second', now() - interval '3 minutes', now() - interval '2 minutes', now() - interval '1 minute']
    where phone = ${phone}`
  t.equal((await tryLogin(client, phone, wrong)).statusCode, 401)
  t.same(await failures(), { kept: 4, locked: false }, 'the oldest failure left the window: four within 15 minutes, no lock')
  t.equal((await tryLogin(client, phone, wrong)).statusCode, 401)
  t.same(await failures(), { kept: 0, locked: true }, 'the fifth within 15 minutes locks the phone')
  t.equal((await tryLogin(client, phone, code)).statusCode, 401, 'even against the right code')
  // A right code whose check ends after racing guesses locked the phone clears the failures, not the lock.
  await clearLoginFailures(sql, phone, null)
  t.same(await failures(), { kept: 0, locked: true }, 'a lock taken while a right code was checked stands')
})

t.test('a token and secret planted from another site of the domain are refused on a courier\'s form', async (t) => {
  const phone = freshPhone()
  const courier = await newCourier('Planted Rider', phone)
  const rider = await loggedIn(t, courier.id, phone)
  await rider.get('/courier')
  // The attacker's own pair, from the courier app's login page, as anyone gets one.
  const attacker = new ConsoleClient(app)
  await attacker.get('/courier/login')
  rider.cookies.set('console_csrf', attacker.cookies.get('console_csrf')!)
  const forged = await rider.post('/courier/shift', { status: 'available', _csrf: attacker.csrf })
  t.equal(forged.statusCode, 403, 'made for nobody, and this is the courier\'s session')
  t.equal(await shiftOf(redis, stack.db.config.QUEUE_PREFIX, courier.id), 'offline', 'the shift did not change')
  await rider.get('/courier')
  t.equal((await rider.post('/courier/shift', { status: 'available' })).statusCode, 303, 'a token made for the courier passes')
  t.equal(await shiftOf(redis, stack.db.config.QUEUE_PREFIX, courier.id), 'available')
})

t.test('CSRF on every form, and courier sessions never mix with console sessions', async (t) => {
  const courier = await newCourier('Csrf Rider', '+2348031114444')
  const rider = await loggedIn(t, courier.id, '+2348031114444')
  await rider.get('/courier')
  for (const [route, fields] of [['/courier/shift', { status: 'available' }], ['/courier/location', { latitude: '6.45', longitude: '3.4' }], ['/courier/logout', {}]] as const) {
    const missing = await rider.post(route, { ...fields, _csrf: null })
    t.equal(missing.statusCode, 403, `${route}: no token, 403`)
    const forged = await rider.post(route, { ...fields, _csrf: 'forged-token' })
    t.equal(forged.statusCode, 403, `${route}: a wrong token, 403`)
  }
  t.match((await rider.post('/courier/shift', { status: 'available', _csrf: null })).body, /This form has expired/)
  const anonymous = new ConsoleClient(app)
  t.equal((await anonymous.post('/courier/login', { phone: '+2348031114444', code: '123456' })).statusCode, 403, 'the login form needs its token too')
  t.equal(await shiftOf(redis, stack.db.config.QUEUE_PREFIX, courier.id), 'offline', 'refused forms changed nothing')

  // The business's session and the courier's: each refused on the other's pages.
  const owner = await consoleUser(sql, url, { email: 'owner@door.example', role: 'business', businessId: account.businessId })
  const business = new ConsoleClient(app)
  await business.setPassword(owner.link)
  await business.logIn(owner)
  const riderCookie = rider.cookie!
  for (const page of ['/console', '/console/orders', '/console/ops/businesses', '/console/ops/couriers']) {
    const answer = await app.inject({ method: 'GET', url: page, headers: { cookie: riderCookie } })
    t.equal(answer.statusCode, 303, `${page}: a courier session opens no console page`)
    t.match(answer.headers.location, /^\/console\/login/)
  }
  const businessCookie = business.cookie!
  for (const page of ['/courier', '/courier/state']) {
    const answer = await app.inject({ method: 'GET', url: page, headers: { cookie: businessCookie } })
    t.not(answer.statusCode, 200, `${page}: a console session opens no courier page`)
  }
  const both = await app.inject({ method: 'GET', url: '/courier', headers: { cookie: `${businessCookie}; ${riderCookie}` } })
  t.equal(both.statusCode, 200, 'with both cookies, /courier is the courier\'s')
  t.notOk(both.body.includes('owner@door.example'), 'and shows nothing of the console user')
  const setCookies = [both.headers['set-cookie']].flat().filter(Boolean).join('\n')
  t.notOk(/console_session=/.test(setCookies), 'no console session cookie is ever set on /courier')
})

t.test('a courier\'s day: available, location, decline, accept, pickup, deliver with the PIN and a photo', async (t) => {
  const phone = '+2348031119876'
  const courier = await newCourier('Musa Bello', phone)
  const rider = await loggedIn(t, courier.id, phone)
  const pages: string[] = []
  const open = async () => {
    const page = await rider.get('/courier')
    t.equal(page.statusCode, 200)
    pages.push(page.body)
    return page.body
  }
  const offline = await open()
  t.match(offline, /You are <strong id="shift-status">offline<\/strong>/)
  t.match(offline, /<script src="\/courier\/assets\/courier\.js" defer><\/script>/, 'the location script, as a file')
  t.match(String((await rider.get('/courier')).headers['content-security-policy']), /script-src 'self'/, 'its CSP allows scripts from this origin only')
  const script = await rider.get('/courier/assets/courier.js')
  t.match(script.body, /navigator\.geolocation\.watchPosition/)
  t.match(script.body, /\/courier\/location/)

  t.equal(await flashAfter(rider, await rider.post('/courier/shift', { status: 'available' })), 'You are available: offers near you appear here.')
  t.equal(await shiftOf(redis, stack.db.config.QUEUE_PREFIX, courier.id), 'available', 'changeShift ran')
  const ping = await rider.post('/courier/location', { latitude: String(ISLAND.lat), longitude: String(ISLAND.lng), accuracy_m: '12' })
  t.equal(ping.statusCode, 204, 'the position is recorded')
  t.equal((await rider.post('/courier/location', { latitude: String(ISLAND.lat), longitude: String(ISLAND.lng) })).statusCode, 429, 'at most one a second')
  t.equal((await rider.post('/courier/location', { latitude: '91', longitude: '3' })).statusCode, 400, 'a latitude off the globe is refused')
  const state = (await rider.get('/courier/state')).json()
  t.match(state, { state: /^available\|\|$/ }, 'the page state, for the script to compare')

  const [declined, delivered] = await placeOrders(stack.gateway, account.apiKey, [shipment(), shipment({ proof: { pin: true, photo: true }, recipient_name: 'Ngozi Eze', recipient_phone: '+2348020001111' })])
  const order = (await findOrderById(sql, delivered!))!
  const pin = order.deliveryPin!
  t.match(pin, /^\d{4}$/)

  const firstOffer = await insertOffer(sql, { id: newOfferId(), orderId: declined!, courierId: courier.id, offerS: 600 })
  const withOffer = await open()
  t.match(withOffer, /New offer/)
  t.match(withOffer, /Drop-off area/)
  t.match(withOffer, /Phone case, 2 kg/)
  t.match(withOffer, /s left\)/)
  // The rider's clock (TRACKING_TIME_ZONE, Africa/Lagos by default), named as the tracking page names it.
  const lagos = new Intl.DateTimeFormat('en-NG', { timeZone: 'Africa/Lagos', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' }).format(firstOffer!.expiresAt)
  t.match(lagos, /^\d\d:\d\d WAT$/)
  t.ok(withOffer.includes(`>${lagos}</time>`), `the deadline reads ${lagos}, not UTC`)
  t.notOk(withOffer.includes('Chidi Okafor'), 'an offer does not name the recipient')
  t.not((await rider.get('/courier/state')).json().state, state.state, 'the state changed: the script reloads')
  t.equal(await flashAfter(rider, await rider.post(`/courier/offers/${firstOffer!.id}/decline`)), 'Offer declined.')
  t.equal(await flashAfter(rider, await rider.post(`/courier/offers/${firstOffer!.id}/accept`)), `Offer ${firstOffer!.id} was declined`, 'a declined offer cannot be accepted, and says why')
  const gone = await insertOffer(sql, { id: newOfferId(), orderId: delivered!, courierId: courier.id, offerS: 600 })
  const anotherRider = await newCourier('Other Rider', '+2348031116666')
  const stranger = await loggedIn(t, anotherRider.id, '+2348031116666')
  await stranger.get('/courier')
  t.match(await flashAfter(stranger, await stranger.post(`/courier/offers/${gone!.id}/accept`)), /was not found/, 'another courier\'s offer is not theirs to take')

  t.equal(await flashAfter(rider, await rider.post(`/courier/offers/${gone!.id}/accept`)), `Order ${delivered} is yours: go to the pickup.`)
  const assigned = await open()
  t.match(assigned, /Go to the pickup/)
  t.match(assigned, /Ngozi Eze/, 'the recipient\'s name after accepting')
  t.match(assigned, /href="tel:\+2348020001111"/, 'and their phone')
  t.match(assigned, /5 Allen Avenue, Ikeja/)
  t.match(assigned, />Picked up</)

  t.equal(await flashAfter(rider, await rider.post(`/courier/orders/${delivered}/pickup`)), `Picked up ${delivered}: now take it to the recipient.`)
  const pickedUp = await open()
  t.match(pickedUp, /enctype="multipart\/form-data"/)
  t.match(pickedUp, /<input id="field-photo" name="photo" type="file" accept="image\/\*" capture="environment" required>/)
  t.match(pickedUp, /name="pin"/)
  t.match(pickedUp, /Mark as failed/)
  t.match(pickedUp, new RegExp(`name="reason"[^>]* maxlength="${REASON_MAX_LENGTH}"`), 'the form takes no longer reason than the API does')

  const photo = { bytes: pngPhoto(), name: 'door.png', type: 'image/png' }
  const wrongPin = pin === '0000' ? '0001' : '0000'
  const refusals: [string, Parameters<typeof deliver>[2], string | RegExp][] = [
    ['no photo', { pin }, `a photo is required to deliver ${delivered}`],
    ['a wrong PIN', { pin: wrongPin, photo }, `Wrong PIN for ${delivered}`],
    ['not an image', { pin, photo: { bytes: Buffer.from('%PDF-1.7 not a photo'), name: 'door.png', type: 'image/png' } }, 'photo must be a JPEG or PNG image'],
    ['6 MB', { pin, photo: { bytes: Buffer.concat([pngPhoto(), Buffer.alloc(6 * 1024 * 1024)]), name: 'big.png', type: 'image/png' } }, 'photo must be at most 5 MB'],
  ]
  for (const [what, fields, message] of refusals) {
    const answer = await deliver(rider, delivered!, fields)
    t.equal(await flashAfter(rider, answer), message, `${what}: refused with the step's own message`)
  }
  t.match(await findOrderById(sql, delivered!), { status: 'picked_up', pinAttempts: 1, photoKey: null }, 'nothing delivered, one wrong PIN counted, no photo kept')

  const done = await deliver(rider, delivered!, { pin, photo })
  t.equal(await flashAfter(rider, done), `Delivered ${delivered}. Well done.`)
  const after = (await findOrderById(sql, delivered!))!
  t.equal(after.status, 'delivered')
  t.ok(after.pinVerifiedAt, 'PIN verified')
  t.match(after.photoKey, /^proof\/ORD-/, 'the photo is in the store')
  t.match(after, { deliveredLat: ISLAND.lat, deliveredLng: ISLAND.lng }, 'where the courier last was')
  pages.push((await rider.get('/courier')).body)

  for (const body of pages) {
    t.notOk(new RegExp(`(?<![\\d.:-])${pin}(?![\\d.:-])`).test(body), 'no courier page holds the PIN')
    t.notOk(body.includes(money(order.price, order.currency)) || body.includes('₦') || /price/i.test(body), 'nor the price')
  }

  // The business sees the proof and the photo; nobody else gets the photo.
  const owner = await consoleUser(sql, url, { email: 'proof@door.example', role: 'business', businessId: account.businessId })
  const business = new ConsoleClient(app)
  await business.setPassword(owner.link)
  await business.logIn(owner)
  const orderPage = await business.get(`/console/orders/${delivered}`)
  t.match(orderPage.body, /<h2>Proof of delivery<\/h2><p>PIN verified<br>Delivered \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<br>Courier at 6\.45000, 3\.40000<\/p>/)
  t.match(orderPage.body, new RegExp(`<img src="/console/orders/${delivered}/proof/photo"`))
  t.match(orderPage.body, /id="tracking-link"/, 'the tracking link')
  t.ok(orderPage.body.includes(String(after.trackingUrl)))
  const image = await business.get(`/console/orders/${delivered}/proof/photo`)
  t.equal(image.statusCode, 200)
  t.equal(image.headers['content-type'], 'image/png')
  t.same(image.rawPayload, photo.bytes, 'the very photo the courier took')
  t.equal((await business.get(`/console/orders/${declined}/proof/photo`)).statusCode, 404, 'an order without a photo: 404')
  t.equal((await rider.get(`/console/orders/${delivered}/proof/photo`)).statusCode, 303, 'the courier\'s session gets no business photo')
  const elsewhere = await seedAccount(sql, { name: 'Someone Else' })
  const otherOwner = await consoleUser(sql, url, { email: 'other@else.example', role: 'business', businessId: elsewhere.businessId })
  const otherBusiness = new ConsoleClient(app)
  await otherBusiness.setPassword(otherOwner.link)
  await otherBusiness.logIn(otherOwner)
  t.equal((await otherBusiness.get(`/console/orders/${delivered}/proof/photo`)).statusCode, 404, 'another business\'s photo: 404')
})

t.test('fail with a reason, then returned; courier:disable ends the courier\'s sessions and voids their code', async (t) => {
  const phone = '+2348031117777'
  const courier = await newCourier('Fail Rider', phone)
  const rider = await loggedIn(t, courier.id, phone)
  await rider.get('/courier')
  const [orderId] = await placeOrders(stack.gateway, account.apiKey, [shipment()])
  const offer = await insertOffer(sql, { id: newOfferId(), orderId: orderId!, courierId: courier.id, offerS: 600 })
  await flashAfter(rider, await rider.post(`/courier/offers/${offer!.id}/accept`))
  await flashAfter(rider, await rider.post(`/courier/orders/${orderId}/pickup`))
  // A blank reason (spaces pass the browser's `required`) is refused in the API's words, on the page.
  for (const reason of ['', '   ']) t.equal(await flashAfter(rider, await rider.post(`/courier/orders/${orderId}/fail`, { reason })), 'reason should not be empty', `a failure needs a reason (${JSON.stringify(reason)})`)
  t.match(await findOrderById(sql, orderId!), { status: 'picked_up' }, 'and the order has not moved')
  t.equal(await flashAfter(rider, await rider.post(`/courier/orders/${orderId}/fail`, { reason: 'Nobody at the door' })), `${orderId} is marked failed: take it back to the sender.`)
  t.match(await findOrderById(sql, orderId!), { status: 'failed' })
  t.match((await rider.get('/courier')).body, /Returned to the sender/)
  t.equal(await flashAfter(rider, await rider.post(`/courier/orders/${orderId}/return`)), `${orderId} is back with the sender.`)
  t.match(await findOrderById(sql, orderId!), { status: 'returned' })

  await issueLoginCode(sql, courier.id, 15)
  const disabled = await disableCourierAndAnnounce(sql, 'test', courier.id, { announce: async () => {}, redispatch: async () => {} })
  t.equal(disabled?.sessionsEnded, 1, 'the web session ended')
  t.equal((await rider.get('/courier')).headers.location, '/courier/login', 'the open app is logged out')
  t.same(await sql`select 1 from courier_login_codes where courier_id = ${courier.id}`, [], 'the pending code is gone')
})
