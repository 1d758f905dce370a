import t from 'tap'
import { countAvailable, shiftOf } from '../../../shared/couriers/positions.js'
import { createRedis } from '../../../shared/redis.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { PLACE } from '../../helpers/gateway.js'
import { useTestDb } from '../../helpers/db.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { shipment } from '../../helpers/shipments.js'
import { waitForValue } from '../../helpers/processes.js'
import { bearer, startStack } from '../../helpers/stack.js'

// The operator's couriers (DESIGN 14): `courier:create`, `courier:token`, `courier:code`, `courier:disable`, and
// `order:advance --to assigned --courier ID` handing an order to a registered courier, run as the
// built CLI. The free-text form (a courier outside the system) is covered by orders.test.ts.

t.test('operator CLI: couriers and assigning a registered one', async (t) => {
  const { gateway, db } = await startStack(t)
  const account = await seedAccount(db.sql, { balance: 100000 })
  const cli = (args: string[]) => runOperatorCli(db, args)
  const placed = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment(), shipment({ recipient_name: 'Second' })] })
  t.equal(placed.statusCode, 201, placed.body)
  const [first, second] = placed.json().orders.map((order: { order_id: string }) => order.order_id) as string[]

  const created = await cli(['courier:create', '--name', 'Bola Ade', '--phone', '+2348095555555', '--vehicle-type', 'bike', '--vehicle-plate', 'KJA-1'])
  t.equal(created.code, 0, created.stderr)
  t.match(created.json, { courier_id: /^[0-9a-f-]{36}$/, courier_token: /^cc_live_[0-9A-Za-z]{32}$/ })
  const courierId: string = created.json.courier_id
  const token: string = created.json.courier_token
  const me = await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: bearer(token) })
  t.match(me.json(), { courier_id: courierId, name: 'Bola Ade', vehicle_type: 'bike', max_weight_kg: 20 }, 'the token opens the courier API; the bike carries 20 kg by default')

  t.match(created.json, { login_code: /^\d{6}$/, login_code_expires_at: /Z$/, courier_app: /\/courier$/ }, 'and a one-time code for the courier web app')
  const expiresIn = Date.parse(created.json.login_code_expires_at) - Date.now()
  t.ok(expiresIn > 14 * 60_000 && expiresIn <= 15 * 60_000, 'valid 15 minutes by default')
  const code = await cli(['courier:code', '--courier', courierId])
  t.equal(code.code, 0, code.stderr)
  t.match(code.json, { courier_id: courierId, phone: '+2348095555555', login_code: /^\d{6}$/ })
  // A new phone reaches the gateways' cached courier at once (the cache's TTL is minutes), as a disable does.
  t.equal((await cli(['courier:phone', '--courier', courierId, '--phone', '+2348095555556'])).code, 0)
  const renumbered = await waitForValue(async () => (await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: bearer(token) })).json().phone, (phone) => phone === '+2348095555556', 5000, 50)
  t.equal(renumbered.value, '+2348095555556', "the courier's new phone is what the gateway shows")
  const codes = await db.sql<{ codeHash: string }[]>`select code_hash from courier_login_codes where courier_id = ${courierId}`
  t.equal(codes.length, 1, 'a new code replaces the old one')
  t.notOk(codes[0]!.codeHash.includes(code.json.login_code), 'stored hashed')
  const shortCode = await runOperatorCli(db, ['courier:code', '--courier', courierId], { COURIER_CODE_TTL_MIN: '2' })
  t.ok(Date.parse(shortCode.json.login_code_expires_at) - Date.now() <= 2 * 60_000, 'COURIER_CODE_TTL_MIN sets how long')
  const noCourier = await cli(['courier:code', '--courier', '00000000-0000-4000-8000-000000000999'])
  t.equal(noCourier.code, 1)
  t.equal(noCourier.stderr, 'courier 00000000-0000-4000-8000-000000000999 does not exist\n')

  const another = await cli(['courier:token', '--courier', courierId])
  t.equal(another.code, 0, another.stderr)
  t.not(another.json.courier_token, token, 'another token, different from the first')
  // Each credential handed out is on the audit trail, as cli:<os user>, naming the courier and nothing it could sign in with.
  const issuedAudit = await db.sql`select actor, action, subject, before, after from audit_log where action in ('courier.code', 'courier.token') order by id`
  t.same(issuedAudit.map((row) => [row.action, row.subject, row.before, row.after]), [['courier.code', courierId, null, null], ['courier.code', courierId, null, null], ['courier.token', courierId, null, null]], 'two codes and a token, audited once each; the refused code is not')
  t.ok(issuedAudit.every((row) => /^cli:/.test(row.actor)), 'by the operator')
  t.notMatch(JSON.stringify(await db.sql`select * from audit_log`), another.json.courier_token.slice(8), 'no token on the trail')

  const assigned = await cli(['order:advance', '--order', first, '--to', 'assigned', '--courier', courierId])
  t.equal(assigned.code, 0, assigned.stderr)
  t.same(assigned.json.courier, { id: courierId, name: 'Bola Ade', phone: '+2348095555556', vehicle_type: 'bike', vehicle_plate: 'KJA-1', location: null }, 'the registered courier, by id, with their vehicle')
  const read = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${first}`, headers: bearer(account.apiKey) })
  t.same(read.json().courier, assigned.json.courier, 'the business reads the same courier')
  const mine = await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: bearer(token) })
  t.same(mine.json().active_orders.map((order: { order_id: string }) => order.order_id), [first], 'the order is now the courier\'s')
  const pickup = await gateway.inject({ method: 'POST', url: `/v2/courier/orders/${first}/pickup`, headers: bearer(token) })
  t.equal(pickup.statusCode, 200, 'and the courier moves it through their own API')

  // Registered couriers are live: a test order keeps the sandbox courier (DESIGN 14).
  const testOrder = await seedOrder(db.sql, account.businessId, false)
  const refusals: [string[], RegExp][] = [
    [['order:advance', '--order', testOrder, '--to', 'assigned', '--courier', courierId], new RegExp(`^${testOrder} is a test order; a registered courier cannot take it\n$`)],
    [['order:advance', '--order', second, '--to', 'assigned', '--courier', '00000000-0000-4000-8000-000000000000'], /^courier 00000000-0000-4000-8000-000000000000 does not exist\n$/],
    [['order:advance', '--order', second, '--to', 'assigned', '--courier', 'rider-7'], /--courier must be/],
    [['order:advance', '--order', second, '--to', 'assigned', '--courier', courierId, '--courier-name', 'X'], /not both/],
    [['order:advance', '--order', second, '--to', 'picked_up', '--courier', courierId], /--courier is only for --to assigned/],
  ]
  for (const [args, message] of refusals) {
    const run = await cli(args)
    t.equal(run.code, 1, `${args.slice(4).join(' ')} exits 1`)
    t.match(run.stderr, message)
  }

  // On shift and on the map when they are disabled.
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: bearer(token), payload: { status: 'available' } })).statusCode, 200)
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: bearer(token), payload: { latitude: 6.45, longitude: 3.4 } })).statusCode, 204)
  const redis = createRedis(db.config)
  t.teardown(() => redis.disconnect())
  t.equal((await countAvailable(redis, db.config.QUEUE_PREFIX)).get('bike'), 1, 'on the map before')
  // Capacity aside, a pending offer of the second order waits with the courier when they are disabled.
  await db.sql`insert into dispatch_offers (id, order_id, courier_id, status, expires_at) values ('off_0000000000000001', ${second}, ${courierId}, 'pending', now() + interval '30 seconds')`
  const disabled = await cli(['courier:disable', '--courier', courierId])
  t.equal(disabled.code, 0, disabled.stderr)
  t.same(disabled.json.still_with_courier, [first], 'the picked-up order stays with the courier and is listed')
  t.equal((await countAvailable(redis, db.config.QUEUE_PREFIX)).get('bike'), 0, 'off the map: the couriers-available gauge no longer counts them')
  t.equal(await shiftOf(redis, db.config.QUEUE_PREFIX, courierId), 'offline')
  t.same(await db.sql`select 1 from courier_login_codes where courier_id = ${courierId}`, [], 'their pending login code is gone')
  t.equal(disabled.json.sessions_ended, 0, 'and their web sessions (none here) ended')
  const afterDisable = await cli(['courier:code', '--courier', courierId])
  t.equal(afterDisable.stderr, `courier ${courierId} is disabled\n`, 'a disabled courier gets no code')
  const [offer] = await db.sql`select status, reason from dispatch_offers where id = 'off_0000000000000001'`
  t.same({ ...offer }, { status: 'withdrawn', reason: 'courier disabled' }, 'their pending offer is withdrawn, so the order can go to another courier')
  const refused = await cli(['order:advance', '--order', second, '--to', 'assigned', '--courier', courierId])
  t.equal(refused.code, 1)
  t.equal(refused.stderr, `courier ${courierId} is disabled\n`, 'a disabled courier cannot be handed an order')
  const untouched = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${second}`, headers: bearer(account.apiKey) })
  t.match(untouched.json(), { status: 'created', version: 1, courier: null }, 'the refused assignments changed nothing')
  const [test] = await db.sql`select status, version, courier_id from orders where id = ${testOrder}`
  t.same({ ...test }, { status: 'created', version: 1, courierId: null }, 'and the test order is still waiting for the sandbox courier')
})

t.test('operator CLI: a courier\'s phone is checked, stored in one form, and held by one enabled courier', async (t) => {
  const db = await useTestDb(t)
  const cli = (args: string[]) => runOperatorCli(db, args)
  const couriers = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from couriers`)[0]!.n
  const create = (name: string, phone: string, ...more: string[]) => cli(['courier:create', '--name', name, '--phone', phone, '--vehicle-type', 'bike', ...more])
  const refusals: [string, string[], RegExp][] = [
    ['not a phone', ['123'], /^--phone must be a phone number: 0 and 10 digits or \+234 and 10 digits \(Nigeria\), or \+ and a country code, 8 to 15 digits in all, got '123'\n$/],
    ['letters', ['0809 000 OO16'], /^--phone must be a phone number: .*, got '0809 000 OO16'\n$/],
    ['a digit short', ['+234 809 000 001'], /^--phone must be a phone number/],
    ['a negative weight', ['+2348090000099', '--max-weight-kg', '-5'], /^--max-weight-kg must be a number from 0.1 to 100000, got '-5'\n$/],
  ]
  for (const [what, [phone, ...more], message] of refusals) {
    const run = await create('Bad Input', phone!, ...more)
    t.equal(run.code, 1, `${what}: exits 1`)
    t.equal(run.stdout, '', `${what}: nothing on stdout`)
    t.match(run.stderr, message, `${what}: one line that says why`)
  }
  t.equal(await couriers(), 0, 'no courier was made')

  const musa = await create('Musa Bello', '0809 000 0016')
  t.equal(musa.code, 0, musa.stderr)
  const code = await cli(['courier:code', '--courier', musa.json.courier_id])
  t.equal(code.json.phone, '+2348090000016', 'stored in its E.164 form: a leading 0 is +234')

  const twin = await create('Twin Rider', '+234 809 000 0016')
  t.equal(twin.code, 1)
  t.equal(twin.stdout, '')
  t.equal(twin.stderr, `phone +2348090000016 is already courier ${musa.json.courier_id}'s (Musa Bello); disable that courier first or give another number\n`, 'the same phone in another spelling is refused, naming who has it')
  t.equal(await couriers(), 1, 'and nothing was written')

  const abroad = await create('Abroad', '+44 20 7946 0958')
  t.equal(abroad.code, 0, abroad.stderr)
  t.equal((await cli(['courier:code', '--courier', abroad.json.courier_id])).json.phone, '+442079460958', 'a number with its country code keeps it')

  t.equal((await cli(['courier:disable', '--courier', musa.json.courier_id])).code, 0)
  const successor = await create('New Rider', '08090000016')
  t.equal(successor.code, 0, `a disabled courier's number can go to a new rider: ${successor.stderr}`)

  // A rider's new number (or one the phone migration could not read) by the same rule.
  const phone = (courierId: string, typed: string) => cli(['courier:phone', '--courier', courierId, '--phone', typed])
  const moved = await phone(abroad.json.courier_id, '0809 111 2222')
  t.equal(moved.code, 0, moved.stderr)
  t.same(moved.json, { courier_id: abroad.json.courier_id, phone: '+2348091112222' }, 'stored in its E.164 form')
  t.equal((await cli(['courier:code', '--courier', abroad.json.courier_id])).json.phone, '+2348091112222', 'and logged in with from now on')
  const clash = await phone(abroad.json.courier_id, '+234 809 000 0016')
  t.equal(clash.code, 1)
  t.equal(clash.stderr, `phone +2348090000016 is already courier ${successor.json.courier_id}'s (New Rider); disable that courier first or give another number\n`, "another enabled courier's number is refused")
  t.equal((await phone(abroad.json.courier_id, '+2348091112222')).code, 0, 'its own number again is no clash')
  t.match((await phone(abroad.json.courier_id, '123')).stderr, /^--phone must be a phone number/)
  t.equal((await phone('00000000-0000-4000-8000-000000000000', '0809 333 4444')).stderr, 'courier 00000000-0000-4000-8000-000000000000 does not exist\n')
  const [audited] = await db.sql<{ count: number }[]>`select count(*)::int as count from audit_log where action = 'courier.phone' and subject = ${abroad.json.courier_id}`
  t.equal(audited!.count, 2, 'each change is on the audit trail')
})
