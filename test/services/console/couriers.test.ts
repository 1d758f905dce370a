import t from 'tap'
import { Redis } from 'ioredis'
import { recordFix, setShift } from '../../../shared/couriers/positions.js'
import { findCourierByTokenHash } from '../../../shared/db/couriers.js'
import { insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { invalidationChannel } from '../../../shared/invalidation.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, seedOrder, startConsole } from '../../helpers/console.js'
import { useTestDb } from '../../helpers/db.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { waitFor } from '../../helpers/processes.js'
import { ISLAND } from '../../helpers/shipments.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { secretHash } from '../../../shared/secret-hash.js'

/*
 * The operator's side of dispatch (DESIGN 14): the couriers page with each courier's shift and
 * last fix from Redis, the disable button, and the list of orders waiting for a courier.
 */

const db = await useTestDb(t)
const { sql } = db
const prefix = db.env.QUEUE_PREFIX
const { app, url } = await startConsole(t, db.env)
const ada = await seedAccount(sql, { name: 'Ada Stores' })
const operator = await consoleUser(sql, url, { email: 'ops@example.com', role: 'operator' })
const owner = await consoleUser(sql, url, { email: 'owner@ada.example', role: 'business', businessId: ada.businessId })
await new ConsoleClient(app).setPassword(operator.link)
await new ConsoleClient(app).setPassword(owner.link)
const redis = new Redis(db.env.REDIS_URL)
t.teardown(() => redis.disconnect())

async function rider(name: string, vehiclePlate: string | null = null) {
  return createdCourier(sql, { name, vehiclePlate })
}

/** A live order of Ada's moved by dispatch to `to`, held by the courier. */
async function orderWith(courier: { id: string; name: string; phone: string }, to: 'assigned' | 'picked_up'): Promise<string> {
  const orderId = await seedOrder(sql, ada.businessId)
  const steps = to === 'assigned' ? ['assigned'] as const : ['assigned', 'picked_up'] as const
  for (const step of steps) {
    const held = step === 'assigned' ? { id: courier.id, name: courier.name, phone: courier.phone, vehicle_plate: null, vehicle_type: 'bike' as const } : null
    const outcome = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to: step, courier: held, reason: null }, { actor: 'test' })
    if (outcome.kind !== 'changed') throw new Error(`${orderId} did not move to ${step}: ${outcome.kind}`)
  }
  return orderId
}

async function operatorClient() {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  return client
}

t.test('the couriers page shows each courier, their shift and last fix from Redis, and the orders they hold', async (t) => {
  const { courier: musa } = await rider('Musa Bello', 'LSR-123-XY')
  const { courier: idle } = await rider('Idle Rider')
  await setShift(redis, prefix, musa, 'available')
  await recordFix(redis, prefix, musa, { latitude: ISLAND.lat, longitude: ISLAND.lng, at: new Date(Date.now() - 30_000).toISOString() })
  const orderId = await orderWith(musa, 'assigned')

  const client = await operatorClient()
  const page = await client.get('/console/ops/couriers')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<a href="\/console\/ops\/couriers" aria-current="page">Couriers<\/a>/, 'in the operator navigation')
  const row = new RegExp(`<tr id="courier-${musa.id}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? ''
  t.match(row, 'Musa Bello')
  t.match(row, musa.phone)
  t.match(row, /bike<br>LSR-123-XY/)
  t.match(row, /20 kg/, 'a bike carries 20 kg unless told otherwise')
  t.match(row, /<td>enabled<\/td><td class="shift-available">available<\/td>/)
  t.match(row, /6\.45000, 3\.40000<br><time datetime="[^"]+">3\d s ago<\/time>/, 'the fix and how old it is')
  t.match(row, `1: <ul><li><a href="/console/ops/orders/${orderId}">${orderId}</a> (assigned)</li></ul>`)
  t.match(row, `Disable Musa Bello`)
  const other = new RegExp(`<tr id="courier-${idle.id}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? ''
  t.match(other, /<td class="shift-offline">offline<\/td><td>none<\/td>\s*<td>none<\/td>/, 'never on shift, no fix, no orders')
})

t.test('disable needs the form token; then every token is revoked, assigned orders go back to created and picked-up ones stay', async (t) => {
  const { courier: ngozi, token } = await rider('Ngozi Eze')
  const assigned = await orderWith(ngozi, 'assigned')
  const pickedUp = await orderWith(ngozi, 'picked_up')
  const subscriber = new Redis(db.env.REDIS_URL)
  t.teardown(() => subscriber.disconnect())
  const heard: string[] = []
  subscriber.on('message', (_channel, message) => heard.push(message))
  await subscriber.subscribe(invalidationChannel(prefix))

  const client = await operatorClient()
  await client.get('/console/ops/couriers')
  const refused = await client.post(`/console/ops/couriers/${ngozi.id}/disable`, { _csrf: null })
  t.equal(refused.statusCode, 403, 'no token, no change')
  const forged = await client.post(`/console/ops/couriers/${ngozi.id}/disable`, { _csrf: 'forged' })
  t.equal(forged.statusCode, 403)
  t.ok(await findCourierByTokenHash(sql, secretHash(token)), 'the courier and token still work')

  await client.get('/console/ops/couriers')
  const disabled = await client.post(`/console/ops/couriers/${ngozi.id}/disable`)
  t.equal(disabled.statusCode, 303)
  t.equal(disabled.headers.location, `/console/ops/couriers#courier-${ngozi.id}`)
  const page = await client.get('/console/ops/couriers')
  t.match(page.body, `Courier ${ngozi.id} is disabled; 1 token(s) revoked. Handed back to dispatch: ${assigned}. Still with the courier (already picked up): ${pickedUp}.`)
  const row = new RegExp(`<tr id="courier-${ngozi.id}">[\\s\\S]*?</tr>`).exec(page.body)?.[0] ?? ''
  t.match(row, /<td>disabled \d{4}-\d\d-\d\d [\d:]+ UTC<\/td><td>—<\/td>/)
  t.notMatch(row, 'Disable Ngozi Eze', 'no button once disabled')
  t.match(row, `(picked_up)`, 'the order picked up is still listed with them')

  t.equal(await findCourierByTokenHash(sql, secretHash(token)), null, 'the token no longer authenticates')
  t.same(await sql`select count(*)::int as live from courier_tokens where courier_id = ${ngozi.id} and revoked_at is null`, [{ live: 0 }])
  const [back] = await sql<{ status: string; courierId: string | null; history: { status: string; reason?: string }[] }[]>`select status, courier_id, history from orders where id = ${assigned}`
  t.match(back, { status: 'created', courierId: null })
  t.match(back.history.at(-1), { status: 'created', reason: 'courier disabled' })
  t.same(await sql`select status, courier_id from orders where id = ${pickedUp}`, [{ status: 'picked_up', courierId: ngozi.id }])
  t.same(await sql`select actor, subject from audit_log where action = 'courier.disable'`, [{ actor: 'ops@example.com', subject: ngozi.id }])
  t.ok(await waitFor(() => heard.includes(JSON.stringify({ kind: 'courier-token', tokenHashes: [secretHash(token)] })), 10_000), 'the gateways hear of the revoked token')

  t.equal((await client.post('/console/ops/couriers/00000000-0000-4000-8000-000000000000/disable')).statusCode, 404, 'no such courier')
})

t.test('courier:disable takes the same step and prints what it handed back and what it kept', async (t) => {
  const { courier } = await rider('Cli Rider')
  const [assigned, pickedUp] = [await orderWith(courier, 'assigned'), await orderWith(courier, 'picked_up')]
  const run = await runOperatorCli(db, ['courier:disable', '--courier', courier.id])
  t.equal(run.code, 0, run.stderr)
  t.match(run.json, { courier_id: courier.id, disabled_at: String, handed_back: [assigned], still_with_courier: [pickedUp] })
  const page = await (await operatorClient()).get('/console/ops/couriers')
  t.notMatch(page.body, 'Disable Cli Rider', 'the console sees the courier disabled')

  // Again (a retry, a second operator): nothing new revoked or handed back, and one audit row.
  const again = await runOperatorCli(db, ['courier:disable', '--courier', courier.id])
  t.equal(again.code, 0, again.stderr)
  t.match(again.json, { courier_id: courier.id, disabled_at: run.json.disabled_at, handed_back: [], still_with_courier: [pickedUp] })
  t.same(await sql`select after ->> 'tokens_revoked' as revoked from audit_log where action = 'courier.disable' and subject = ${courier.id}`, [{ revoked: '1' }], 'the first disable is on the audit trail, once')
})

t.test('a business user cannot open the couriers pages or disable a courier; no one logged out can either', async (t) => {
  const { courier } = await rider('Kept Rider')
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  for (const path of ['/console/ops/couriers', '/console/ops/waiting']) t.equal((await client.get(path)).statusCode, 403, `${path} is an operator page`)
  t.equal((await client.post(`/console/ops/couriers/${courier.id}/disable`)).statusCode, 403)
  const anonymous = await new ConsoleClient(app).get('/console/ops/couriers')
  t.equal(anonymous.statusCode, 303)
  t.match(anonymous.headers.location, /^\/console\/login\?next=/)
  t.same(await sql`select disabled_at from couriers where id = ${courier.id}`, [{ disabledAt: null }])
})

t.test('the waiting list shows live orders created for more than 2 minutes (since placed or handed back), longest waiting first, with any pending offer', async (t) => {
  const { courier } = await rider('Offered Rider')
  const [oldest, older, fresh, sandbox, handedBack] = [await seedOrder(sql, ada.businessId), await seedOrder(sql, ada.businessId), await seedOrder(sql, ada.businessId), await seedOrder(sql, ada.businessId, false), await seedOrder(sql, ada.businessId)]
  const placedAgo = (ids: string[], minutes: number) => sql`
    update orders set created_at = now() - make_interval(mins => ${minutes}),
      history = jsonb_build_array(jsonb_build_object('status', 'created', 'at', to_json(now() - make_interval(mins => ${minutes}))))
    where id = any(${ids})`
  await placedAgo([oldest, sandbox, handedBack], 10)
  await placedAgo([older], 3)
  // Placed 10 minutes ago, assigned, and handed back 30 seconds ago: it has waited 30 seconds.
  await sql`update orders set history = history
    || jsonb_build_array(jsonb_build_object('status', 'assigned', 'at', to_json(now() - interval '9 minutes')), jsonb_build_object('status', 'created', 'at', to_json(now() - interval '30 seconds')))
    where id = ${handedBack}`
  t.ok(await insertOffer(sql, { id: newOfferId(), orderId: oldest, courierId: courier.id, offerS: 30 }))

  const client = await operatorClient()
  const page = await client.get('/console/ops/waiting')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<a href="\/console\/ops\/waiting" aria-current="page">Waiting for a courier<\/a>/)
  const rows = [...page.body.matchAll(/<tr><td><a href="\/console\/ops\/orders\/(ORD-[^"]+)">[\s\S]*?<\/tr>/g)]
  t.same(rows.map((row) => row[1]), [oldest, older], 'the two old live orders, oldest first; not the fresh one, nor a test order')
  t.match(rows[0][0], /<td>10 min<br>/)
  t.match(rows[0][0], `<a href="/console/ops/businesses/${ada.businessId}">Ada Stores</a>`)
  t.match(rows[0][0], /<td>Island<\/td><td>pending<\/td>/, 'the pickup zone and the offer out')
  t.match(rows[1][0], /<td>3 min<br>/)
  t.match(rows[1][0], /<td>none<\/td><\/tr>/)
  t.notMatch(page.body, fresh)
  t.notMatch(page.body, sandbox)
  t.notMatch(page.body, handedBack, 'an order handed back a moment ago has not waited 2 minutes, however long ago it was placed')
})

t.test("the business's order page shows the delivery PIN while on its way, then how it was delivered", async (t) => {
  const { courier } = await rider('Proof Rider')
  const orderId = await orderWith(courier, 'picked_up')
  await sql`update orders set delivery_pin = '4821' where id = ${orderId}`
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  const onItsWay = await client.get(`/console/orders/${orderId}`)
  t.equal(onItsWay.statusCode, 200)
  t.match(onItsWay.body, /<h2>Delivery PIN<\/h2><p><strong>4821<\/strong><\/p>/, 'the PIN to pass to the recipient')

  const delivered = await changeOrder(sql, { orderId, scope: { courierId: courier.id } }, { kind: 'advance', to: 'delivered', courier: null, reason: null, pin: '4821', location: { latitude: 6.6, longitude: 3.35, at: new Date().toISOString() } })
  t.equal(delivered.kind, 'changed')
  const after = await client.get(`/console/orders/${orderId}`)
  t.match(after.body, /<h2>Proof of delivery<\/h2><p>PIN verified<br>Delivered \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<br>Courier at 6\.60000, 3\.35000<\/p>/)
  t.notMatch(after.body, /Delivery PIN/, 'no PIN card once delivered')
})

t.test('a delivery without the proof asked for says who made it: the business in test mode, or an operator', async (t) => {
  /** An order of Ada's asking for a PIN and a photo, which nobody will give. */
  const askingProof = async (livemode: boolean) => {
    const orderId = await seedOrder(sql, ada.businessId, livemode)
    await sql`update orders set delivery_pin = '4821', shipment = shipment || ${JSON.stringify({ proof: { pin: true, photo: true } })}::text::jsonb where id = ${orderId}`
    return orderId
  }
  const business = new ConsoleClient(app)
  await business.logIn(owner)
  const ops = await operatorClient()

  // The business walks its test order to delivered with the sandbox's advance form.
  const testOrder = await askingProof(false)
  await business.get(`/console/orders/${testOrder}`)
  for (const to of ['assigned', 'picked_up', 'delivered']) t.equal((await business.post(`/console/orders/${testOrder}/advance`, { to })).statusCode, 303, `test order → ${to}`)
  // An operator delivers a live one by hand, as after a courier's fifth wrong PIN, and a test one
  // too: the card follows who moved the order, not its mode.
  const [liveOrder, operatorsTestOrder] = [await askingProof(true), await askingProof(false)]
  for (const orderId of [liveOrder, operatorsTestOrder]) {
    await ops.get(`/console/ops/orders/${orderId}`)
    for (const to of ['assigned', 'picked_up', 'delivered']) {
      const fields: Record<string, string> = to === 'assigned' ? { to, courier_name: 'Musa Bello', courier_phone: '+2348090000000' } : { to }
      t.equal((await ops.post(`/console/ops/orders/${orderId}/advance`, fields)).statusCode, 303, `${orderId} → ${to}`)
    }
  }

  const cards: [string, string, string][] = [
    [`/console/orders/${testOrder}`, 'marked delivered in test mode', "the business's page of its test order"],
    [`/console/ops/orders/${testOrder}`, 'marked delivered in test mode', "the operator's page of it"],
    [`/console/orders/${liveOrder}`, 'delivered by an operator', "the business's page of the live order"],
    [`/console/ops/orders/${liveOrder}`, 'delivered by an operator', "the operator's page of it"],
    [`/console/orders/${operatorsTestOrder}`, 'delivered by an operator', "the business's page of a test order an operator delivered"],
  ]
  for (const [path, how, which] of cards) {
    const page = await (path.startsWith('/console/ops/') ? ops : business).get(path)
    t.equal(page.statusCode, 200, path)
    const card = /<div class="card" id="proof">[\s\S]*?<\/div>/.exec(page.body)?.[0] ?? ''
    t.match(card, new RegExp(`<p>PIN not verified \\(${how}\\)<br>Delivered \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC</p><p>No photo \\(${how}\\)</p>`), `${which}: ${how}`)
  }
})
