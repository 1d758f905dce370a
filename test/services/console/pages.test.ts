import { loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import { createSecretBox } from '../../../shared/webhooks/secret-box.js'
import { createServer } from 'node:http'
import t from 'tap'
import { Redis } from 'ioredis'
import { appendEvents } from '../../../shared/db/events.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { newEventId } from '../../../shared/ids.js'
import { invalidationChannel } from '../../../shared/invalidation.js'
import { useTestDb } from '../../helpers/db.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, seedOrder, startConsole } from '../../helpers/console.js'
import { waitFor } from '../../helpers/processes.js'
import { creditWalletAs } from '../../../shared/accounts/operator-actions.js'
import { demoCardFile } from '../../helpers/accounts.js'
import { escapeHtml } from '../../../services/console/html.js'
import { demoCardText, positionOf, spoiled } from '../../helpers/card-text.js'

/*
 * The console's pages beyond the browser test's path, over HTTP: the overview, the catalog,
 * webhook endpoints, businesses, platform rates and the operator's order list.
 */

const db = await useTestDb(t)
const { sql } = db
const { app, url } = await startConsole(t, db.env)
const ada = await seedAccount(sql, { balance: 2500, sandbox: 1000, name: 'Ada Stores' })
const bola = await seedAccount(sql, { name: 'Bola Foods' })
const operator = await consoleUser(sql, url, { email: 'ops@example.com', role: 'operator' })
const owner = await consoleUser(sql, url, { email: 'owner@ada.example', role: 'business', businessId: ada.businessId })
await new ConsoleClient(app).setPassword(operator.link)
await new ConsoleClient(app).setPassword(owner.link)

t.test('the overview shows both wallets in naira, today\'s orders and the 30-day spend chart', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  const page = await client.get('/console')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h2>Live wallet<\/h2><p class="balance">₦2,500\.00<\/p>/)
  t.match(page.body, /<h2>Test wallet<\/h2><p class="balance">₦1,000\.00<\/p>/)
  t.match(page.body, /No orders today\./)
  t.match(page.body, /<svg class="chart" role="img" aria-labelledby="spend-caption"/)
  t.equal((page.body.match(/<rect /g) ?? []).length, 30, 'a bar per day')
  t.match(page.body, /Spend over the last 30 days: ₦0\.00/)
  t.match(page.headers['cache-control'], 'no-store')
})

t.test('the catalog lists the card\'s options with their ids', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  const page = await client.get('/console/catalog')
  for (const [label, id] of Object.entries(ada.options)) t.match(page.body, `<td>${label}</td><td><code>${id}</code></td>`)
})

t.test('webhook endpoints: create (secret shown once), the log, rotate, delete; a bad URL is refused at its field', async (t) => {
  const receiver = createServer((_request, response) => response.end('ok'))
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => receiver.close(resolve)))
  const address = receiver.address()
  const hook = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hooks`
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  await client.get('/console/webhooks')
  const refused = await client.post('/console/webhooks', { mode: 'live', url: 'ftp://example.com/x', description: '' })
  t.equal(refused.statusCode, 400)
  t.match(refused.body, /aria-invalid="true" aria-describedby="field-url-error"/)

  const created = await client.post('/console/webhooks', { mode: 'test', url: hook, description: 'test hooks', event_types: ['order.created', 'order.delivered'] })
  t.equal(created.statusCode, 201)
  const secret = /id="webhook-secret">(whsec_[^<]+)</.exec(created.body)?.[1]
  t.ok(secret, 'the secret is on the page that made it')
  const [row] = await sql<{ id: string; secret: string; eventTypes: string[]; livemode: boolean }[]>`select id, secret, event_types, livemode from webhook_endpoints where business_id = ${ada.businessId}`
  t.same([createSecretBox(loadConfig(webhookKeysEnv, db.env).WEBHOOK_SECRET_KEYS).open(row.secret), row.eventTypes, row.livemode], [secret, ['order.created', 'order.delivered'], false])
  t.notOk(row.secret.includes('whsec_'), 'stored sealed, not in clear')
  const list = await client.get('/console/webhooks?mode=test')
  t.match(list.body, hook)
  t.notMatch(list.body, secret ?? 'whsec_', 'and never again')
  const endpointPage = await client.get(`/console/webhooks/${row.id}`)
  t.match(endpointPage.body, /No deliveries yet\./)

  // Redeliver: one more delivery row of this business's event, queued for the sender; another business's event is not found.
  const eventId = newEventId()
  const otherEvent = newEventId()
  const [adaOrder, bolaOrder] = [await seedOrder(sql, ada.businessId, false), await seedOrder(sql, bola.businessId, false)]
  await sql.begin(async (tx) => {
    const at = new Date()
    await appendEvents(tx, { businessId: ada.businessId, livemode: false }, [{ id: eventId, type: 'order.created', orderId: adaOrder, orderVersion: 1, data: { order: {} }, createdAt: at }], null)
    await appendEvents(tx, { businessId: bola.businessId, livemode: false }, [{ id: otherEvent, type: 'order.created', orderId: bolaOrder, orderVersion: 1, data: { order: {} }, createdAt: at }], null)
  })
  // A second endpoint that takes the event too: the button on the first's log is for the first only.
  await client.get('/console/webhooks')
  t.equal((await client.post('/console/webhooks', { mode: 'test', url: `${hook}/second`, description: 'second', event_types: ['order.created'] })).statusCode, 201)
  await client.get(`/console/webhooks/${row.id}`)
  const redelivered = await client.post(`/console/events/${eventId}/redeliver`, { endpoint: row.id })
  t.equal(redelivered.statusCode, 303)
  t.match((await client.get(String(redelivered.headers.location))).body, `Event ${eventId} is queued again for 1 endpoint(s).`)
  t.same(await sql`select endpoint_id, redelivery from webhook_deliveries where event_id = ${eventId}`, [{ endpointId: row.id, redelivery: 1 }])
  t.equal((await client.post(`/console/events/${otherEvent}/redeliver`, { endpoint: row.id })).statusCode, 404, "another business's event")
  t.same(await sql`select id from webhook_deliveries where event_id = ${otherEvent}`, [])

  const rotated = await client.post(`/console/webhooks/${row.id}/rotate`)
  const fresh = /id="webhook-secret">(whsec_[^<]+)</.exec(rotated.body)?.[1]
  t.ok(fresh && fresh !== secret, 'a new secret, shown once')
  await client.get(`/console/webhooks/${row.id}`)
  const deleted = await client.post(`/console/webhooks/${row.id}/delete`)
  t.equal(deleted.statusCode, 303)
  t.match((await client.get(String(deleted.headers.location))).body, /is deleted/)
  t.ok((await sql`select deleted_at from webhook_endpoints where id = ${row.id}`)[0]?.deletedAt, 'marked deleted: the webhook sender removes its rows')
  t.notMatch((await client.get('/console/webhooks')).body, row.id, 'and the list no longer shows it')
})

t.test('operators find and create businesses; the new one has an empty wallet and an audit row', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  t.match((await client.get('/console/ops/businesses?q=ada')).body, 'Ada Stores')
  t.notMatch((await client.get('/console/ops/businesses?q=zzz')).body, 'Ada Stores')
  t.match((await client.get(`/console/ops/businesses?q=${ada.businessId}`)).body, 'Ada Stores', 'by id too')
  const blank = await client.post('/console/ops/businesses', { name: ' ', phone: '+2348000000001', address: '1 Broad Street', state: 'Lagos' })
  t.equal(blank.statusCode, 400)
  t.match(blank.body, /id="field-name-error">Name should not be empty</)
  const made = await client.post('/console/ops/businesses', { name: 'Chidi Crafts', phone: '+2348000000001', address: '1 Broad Street', state: 'Lagos' })
  t.equal(made.statusCode, 303)
  const page = await client.get(String(made.headers.location))
  t.match(page.body, /Business Chidi Crafts is created with an empty wallet/)
  t.match(page.body, /id="live-balance">₦0\.00</)
  const [audit] = await sql`select actor, action, subject from audit_log where action = 'business.create'`
  t.same(audit, { actor: 'ops@example.com', action: 'business.create', subject: 'Chidi Crafts' })

  // The form posted again (a reload, a double click), as the CLI's business:create run again: one business.
  const again = await client.post('/console/ops/businesses', { name: 'chidi crafts', phone: '+2348000000001', address: '1 Broad Street', state: 'Lagos' })
  t.equal(again.headers.location, made.headers.location, 'the same business, any case')
  t.match((await client.get(String(again.headers.location))).body, /Business Chidi Crafts exists already with these details; nothing was created\./)
  const other = await client.post('/console/ops/businesses', { name: 'Chidi Crafts', phone: '+2348000000002', address: '1 Broad Street', state: 'Lagos' })
  t.equal(other.headers.location, made.headers.location, 'other details: shown the business of that name')
  t.match((await client.get(String(other.headers.location))).body, /Nothing was created: this business is named Chidi Crafts already, with phone \+2348000000001, not \+2348000000002\. Give another business another name\./)
  t.equal((await sql`select 1 from businesses where lower(name) = 'chidi crafts'`).length, 1, 'one business of that name')
})

t.test('creating a business takes the API\'s rules for its phone, address and state: refused at each field, with what was typed kept', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/businesses')
  const refused = await client.post('/console/ops/businesses', { name: 'Atlantis Traders', phone: 'notaphone', address: 'x', state: 'Atlantis' })
  t.equal(refused.statusCode, 400)
  t.match(refused.body, /role="alert">The business was not created: correct the marked fields\.</)
  t.match(refused.body, /aria-invalid="true" aria-describedby="field-phone-error">\n<p class="error" id="field-phone-error">Phone must be a phone number: 0 and 10 digits or \+234 and 10 digits \(Nigeria\), or \+ and a country code, 8 to 15 digits in all</)
  t.match(refused.body, /aria-invalid="true" aria-describedby="field-address-error">\n<p class="error" id="field-address-error">Address must be longer than or equal to 5 characters</)
  t.match(refused.body, /aria-invalid="true" aria-describedby="field-state-error">\n<p class="error" id="field-state-error">State must be one of Nigeria&#39;s 36 states or the FCT, such as Lagos</)
  t.notMatch(refused.body, /id="field-name-error"/, 'the name was fine')
  for (const [name, type, value] of [['name', 'text', 'Atlantis Traders'], ['phone', 'tel', 'notaphone'], ['address', 'text', 'x'], ['state', 'text', 'Atlantis']]) {
    t.match(refused.body, `id="field-${name}" name="${name}" type="${type}" value="${value}"`, `${name} as typed`)
  }
  t.same(await sql`select id from businesses where name = 'Atlantis Traders'`, [], 'no business')
  // A state is named, not mentioned: "Not Lagos" names none.
  const mentioned = await client.post('/console/ops/businesses', { name: 'Atlantis Traders', phone: '0803 123 4567', address: '4 Adeola Odeku Street', state: 'Not Lagos' })
  t.equal(mentioned.statusCode, 400)
  t.match(mentioned.body, /id="field-state-error">State must be one of Nigeria&#39;s 36 states/)

  // Any spelling the rules read is taken, and kept in the one form shipments use it in.
  const made = await client.post('/console/ops/businesses', { name: 'Dayo Prints', phone: '0803 123 4567', address: '4 Adeola Odeku Street, Victoria Island', state: 'lagos state' })
  t.equal(made.statusCode, 303)
  t.same(await sql`select phone, address, state from businesses where name = 'Dayo Prints'`, [{ phone: '+2348031234567', address: '4 Adeola Odeku Street, Victoria Island', state: 'Lagos' }])
})

t.test('a refused credit comes back with the amount, reference and wallet as typed and the field marked; nothing is credited', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  const base = `/console/ops/businesses/${bola.businessId}`
  await client.get(base)
  const ledger = async () => sql`select amount, reference from ledger_entries where business_id = ${bola.businessId} order by id`
  const before = await ledger()

  const amount = await client.post(`${base}/credit`, { amount: '12.345', reference: 'TRF-KEEP-1', mode: 'live' })
  t.equal(amount.statusCode, 400)
  t.match(amount.body, /role="alert">Nothing was credited: correct the marked field\.</)
  t.match(amount.body, /id="field-amount" name="amount" type="text" value="12\.345" required aria-invalid="true" aria-describedby="field-amount-error" inputmode="decimal">\n<p class="error" id="field-amount-error">Amount must be a positive number with at most 2 decimals, got &#39;12\.345&#39;</)
  t.match(amount.body, 'id="field-reference" name="reference" type="text" value="TRF-KEEP-1" required maxlength="255">', 'the reference as typed')

  // Without a reference a form sent twice (a double click, a resent post) would credit twice.
  for (const reference of ['', '   ']) {
    const blank = await client.post(`${base}/credit`, { amount: '1000', reference, mode: 'live' })
    t.equal(blank.statusCode, 400)
    t.match(blank.body, /<p class="error" id="field-reference-error">Reference should not be empty</, 'the reference is required')
  }

  // Bola has no test key, so no test wallet: the choice of wallet is what is refused.
  const wallet = await client.post(`${base}/credit`, { amount: '50', reference: 'TRF-KEEP-2', mode: 'test' })
  t.equal(wallet.statusCode, 400)
  t.match(wallet.body, /<select id="field-mode" name="mode" aria-invalid="true" aria-describedby="field-mode-error"><option value="live">Live<\/option><option value="test" selected>Test<\/option><\/select>\n<p class="error" id="field-mode-error">This business has no test wallet yet: it opens with its first test key\.</)
  t.match(wallet.body, 'id="field-amount" name="amount" type="text" value="50" required inputmode="decimal">', 'the amount as typed, not marked')
  t.same(await ledger(), before, 'nothing credited')
})

t.test('a credit past the most a wallet holds is refused at the amount, and nothing is credited', async (t) => {
  const full = await seedAccount(sql, { balance: 10_000_000_000_000, name: 'Full Wallet Ltd' })
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  const base = `/console/ops/businesses/${full.businessId}`
  await client.get(base)
  const over = await client.post(`${base}/credit`, { amount: '0.01', reference: 'TRF-OVER', mode: 'live' })
  t.equal(over.statusCode, 400)
  t.match(over.body, /<p class="error" id="field-amount-error">Amount would take the balance \(₦10,000,000,000,000\.00\) past the most a wallet holds, ₦10,000,000,000,000\.00\.</)
  t.same(await sql`select reference from ledger_entries where business_id = ${full.businessId}`, [{ reference: 'seed' }], 'nothing credited')
})

t.test('a used reference with another amount credits nothing and says so; the same amount is a retry', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  const base = `/console/ops/businesses/${bola.businessId}`
  await client.get(base)
  t.equal((await client.post(`${base}/credit`, { amount: '10', reference: 'TRF-ONCE', mode: 'live' })).statusCode, 303)
  t.equal((await client.post(`${base}/credit`, { amount: '20', reference: 'TRF-ONCE', mode: 'live' })).statusCode, 303)
  t.match((await client.get(base)).body, 'Reference TRF-ONCE already credited ₦10.00, not ₦20.00: nothing was credited; use another reference.')
  t.equal((await client.post(`${base}/credit`, { amount: '10', reference: 'TRF-ONCE', mode: 'live' })).statusCode, 303)
  t.match((await client.get(base)).body, /Reference TRF-ONCE was credited before; the balance is unchanged at /)
  const [{ n }] = await sql`select count(*)::int as n from ledger_entries where business_id = ${bola.businessId} and reference = 'TRF-ONCE'`
  t.equal(n, 1, 'one credit for the reference')
})

t.test('platform rates out of any sane range are refused at their fields, named as the form names them, with what was typed kept', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/platform-rates')
  const before = await getPlatformRates(sql)
  const fields = { baseFare: '600', perKm: '130.50', perKg: '50', minFare: '1000', roadFactor: '1.4', maxDistanceKm: '60', cancelFreeWindowS: '300', cancellationFeePercent: '20', bikeSpeedKmh: '25', carSpeedKmh: '30', busVanSpeedKmh: '25', truckSpeedKmh: '20' }
  const absurd = await client.post('/console/ops/platform-rates', { ...fields, roadFactor: '1e9', baseFare: '5000000', maxDistanceKm: '40000', cancelFreeWindowS: '9999999' })
  t.equal(absurd.statusCode, 400)
  t.match(absurd.body, /role="alert">Nothing was saved: correct the marked fields\.</)
  t.match(absurd.body, /id="field-roadFactor-error">Road factor must be a number from 1 to 3, got &#39;1e9&#39;</)
  t.match(absurd.body, /id="field-baseFare-error">Base fare must be a non-negative amount up to 1000000 with at most 2 decimals, got &#39;5000000&#39;</)
  t.match(absurd.body, /id="field-maxDistanceKm-error">Longest trip must be a number of km from 1 to 2000, got &#39;40000&#39;</)
  t.match(absurd.body, /id="field-cancelFreeWindowS-error">Free cancellation after assignment must be a whole number of seconds from 0 to 86400, got &#39;9999999&#39;</)
  t.notMatch(absurd.body, /(baseFare|roadFactor|maxDistanceKm|cancelFreeWindowS) must/, 'no message names an internal key')
  t.notMatch(absurd.body, /id="field-perKm-error"/, 'a good rate is not marked')
  t.match(absurd.body, 'id="field-roadFactor" name="roadFactor" type="text" value="1e9"', 'as typed')
  t.match(absurd.body, 'id="field-perKm" name="perKm" type="text" value="130.50"', 'the good ones too')
  t.same(await getPlatformRates(sql), before, 'nothing saved')
})

t.test('platform rates: saved with the CLI\'s rules, announced, audited; a bad value changes nothing', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/platform-rates')
  const fields = { baseFare: '600', perKm: '130.50', perKg: '50', minFare: '1000', roadFactor: '1.4', maxDistanceKm: '60', cancelFreeWindowS: '300', cancellationFeePercent: '20', bikeSpeedKmh: '25', carSpeedKmh: '30', busVanSpeedKmh: '25', truckSpeedKmh: '20' }
  const bad = await client.post('/console/ops/platform-rates', { ...fields, perKm: '1.234' })
  t.equal(bad.statusCode, 400)
  t.match(bad.body, /Per km must be a non-negative amount up to 1000000 with at most 2 decimals, got &#39;1\.234&#39;/)
  const low = await client.post('/console/ops/platform-rates', { ...fields, roadFactor: '0.5' })
  t.match(low.body, /Road factor must be a number from 1 to 3, got &#39;0\.5&#39;/)
  t.equal((await getPlatformRates(sql)).perKm, 12_000, 'unchanged')

  const subscriber = new Redis(db.env.REDIS_URL)
  t.teardown(() => subscriber.disconnect())
  const heard: string[] = []
  subscriber.on('message', (_channel, message) => heard.push(message))
  await subscriber.subscribe(invalidationChannel(db.env.QUEUE_PREFIX))
  const saved = await client.post('/console/ops/platform-rates', fields)
  t.equal(saved.statusCode, 303)
  t.match(await getPlatformRates(sql), { baseFare: 60_000, perKm: 13_050, roadFactor: 1.4, maxDistanceKm: 60, cancelFreeWindowS: 300, cancellationFeePercent: 20 })
  t.ok(await waitFor(() => heard.includes(JSON.stringify({ kind: 'platform-rates' })), 10_000), 'gateways and pricing hear of it')
  const [audit] = await sql`select actor, before, after from audit_log where action = 'platform-rates.set'`
  t.match(audit, { actor: 'ops@example.com', before: { perKm: 12_000 }, after: { perKm: 13_050 } })
})

t.test('the audit trail shows every amount in naira: platform rates (stored in kobo) as credits', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get(`/console/ops/businesses/${bola.businessId}`)
  t.equal((await client.post(`/console/ops/businesses/${bola.businessId}/credit`, { amount: '2500.50', reference: 'AUDIT-NAIRA', mode: 'live' })).statusCode, 303)
  await client.get('/console/ops/platform-rates')
  const fields = { baseFare: '600', perKm: '140', perKg: '50', minFare: '1000', roadFactor: '1.4', maxDistanceKm: '60', cancelFreeWindowS: '300', cancellationFeePercent: '20', bikeSpeedKmh: '25', carSpeedKmh: '30', busVanSpeedKmh: '25', truckSpeedKmh: '20' }
  t.equal((await client.post('/console/ops/platform-rates', fields)).statusCode, 303)
  const page = await client.get('/console/ops/audit')
  const rates = /<td>platform-rates\.set<\/td>.*?<code>([^<]*)<\/code><\/td><td><code>([^<]*)<\/code>/s.exec(page.body)
  // jsonb keeps its own order of keys: each is looked for on its own.
  for (const shown of ['baseFare: ₦600.00', 'perKm: ₦140.00', 'perKg: ₦50.00', 'minFare: ₦1,000.00', 'roadFactor: 1.4']) t.match(rates?.[2], shown, `after: ${shown}`)
  t.match(rates?.[1], 'perKm: ₦130.50', 'before: in naira too')
  t.notMatch(page.body, /perKm: 1[34]0?50|"perKm":/, 'never in kobo')
  const credit = /<td>wallet\.credit<\/td>.*?<\/code><\/td><td><code>([^<]*)<\/code>/s.exec(page.body)
  t.match(credit?.[1], 'amount: ₦2,500.50', 'a credit in naira with the currency, as the rates')
  t.match(credit?.[1], 'reference: &quot;AUDIT-NAIRA&quot;', 'other values as JSON')
})

t.test('a rate card without zones is refused with a page listing the problem, and the console keeps serving', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/rate-cards')
  const { zones: _zones, ...withoutZones } = demoCardFile()
  const refused = await client.postFile('/console/ops/rate-cards', { field: 'file', name: 'card.json', content: JSON.stringify({ ...withoutZones, name: 'No Zones Card' }) })
  t.equal(refused.statusCode, 422)
  t.match(refused.body, /Nothing was imported: the file has \d+ problems?, each shown where it is\./)
  t.match(refused.body, /<li>line 1, column 1: zones: /, 'the missing zones are placed at the start of the file')
  t.match(refused.body, /<ol class="listing" start="1" aria-label="Lines 1 to 1 of the file"><li class="problem"><code>\{&quot;name&quot;:[^<]*<\/code><p class="error" role="note">⚠ zones/, 'and marked on its first line')
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from rate_cards where name = 'No Zones Card'`
  t.equal(count, 0, 'nothing was imported')
  t.equal((await client.get('/console/ops/rate-cards')).statusCode, 200, 'the console still answers')
})

t.test('a refused rate card: every problem at its line and column of the file as uploaded, and those lines as written, numbered as in the file', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/rate-cards')
  const upload = async (content: string) => {
    const refused = await client.postFile('/console/ops/rate-cards', { field: 'file', name: 'card.json', content })
    t.equal(refused.statusCode, 422)
    return refused.body
  }
  const text = spoiled(demoCardText(), [
    ['"name": "Lagos Demo"', '"name": "Console Mistakes"'],
    ['{"from":"Island","to":"Lekki","price":2500}', '{"from":"Island","to":"Lekki","price":-2500}'],
    ['{"from":"Island","to":"Ikeja","price":4900}', '{"from":"Island","to":"Ajah","price":4900}'],
    ['{"from":"Lekki","to":"Lekki","price":2100}', '{"from":"Lekki","to":"Lekki","price":2100.005}'],
    ['"label":"10 to 20 kg","min_weight_kg":10', '"label":"10 to 20 kg","min_weight_kg":12'],
  ])
  const problems: [string, string][] = [
    ['"price":-2500', 'options[0].prices[1].price: must not be negative'],
    ['"to":"Ajah"', 'options[1] (5 to 10 kg).prices[3].to: unknown zone Ajah'],
    ['"price":2100.005', 'options[1] (5 to 10 kg).prices[5].price: 2100.005 has more than 2 decimals'],
    ['"min_weight_kg":12', 'bike bands 5 to 10 kg and 10 to 20 kg leave a gap from 10 kg to 12 kg'],
  ]
  const page = await upload(text)
  t.match(page, 'Nothing was imported: the file has 4 problems, each shown where it is.')
  const lines = text.split('\n')
  const at = problems.map(([needle]) => positionOf(text, needle))
  t.same(at.map((position) => position.line), [14, 36, 38, 51], 'lines of the file as written, not of a reformatted copy')
  t.match(page, `<ol class="problems">${problems.map(([, message], index) => `<li>line ${at[index].line}, column ${at[index].column}: ${escapeHtml(message)}</li>`).join('')}</ol>`)
  problems.forEach(([, message], index) => {
    t.match(page, `<li class="problem"><code>${escapeHtml(lines[at[index].line - 1])}</code><p class="error" role="note">⚠ ${escapeHtml(message)}</p></li>`, `${message}, under its line`)
  })
  t.match(page, `<li><code>${escapeHtml(lines[12])}</code></li>`, 'the line before a problem is shown, unmarked')
  t.same([...page.matchAll(/<ol class="listing" start="(\d+)" aria-label="Lines \d+ to (\d+) of the file">/g)].map((match) => [Number(match[1]), Number(match[2])]), [[12, 16], [34, 40], [49, 53]], 'two lines either side of each problem, nearby ones in one run')

  const notJson = spoiled(demoCardText(), [['"currency": "NGN",', '"currency": "NGN"']])
  const syntax = await upload(notJson)
  t.match(syntax, 'Nothing was imported: the file has 1 problem, each shown where it is.')
  t.match(syntax, `<li>line 4, column 3: ${escapeHtml("not valid JSON: expected ',' or '}', found '\"zones\"'")}</li>`, 'a file that is not JSON: where its syntax breaks')
  t.match(syntax, `<li class="problem"><code>${escapeHtml('  "zones": [')}</code>`)

  const oneLine = JSON.stringify(JSON.parse(text))
  const minified = await upload(oneLine)
  const shown = [...minified.matchAll(/<li(?: value="1")? class="problem"><code>([^<]*)<\/code>/g)].map((match) => match[1].replaceAll('&quot;', '"'))
  t.equal(shown.length, 4, 'a line too long to show whole is shown once per problem')
  t.ok(oneLine.length > 4000 && shown.every((part) => part.length <= 162), 'each time only around its problem')
  t.match(shown, [/"price":-2500/, /"to":"Ajah"/, /"price":2100\.005/, /"min_weight_kg":12/])
  t.match(minified, `<li>line 1, column ${oneLine.indexOf('"price":-2500') + 1}: `)

  const tooMany = await upload(demoCardText().replace(/"price":(\d+)/g, '"price":$1.125').replaceAll('"to":"Ikeja"', '"to":"Ikeja2"').replaceAll('"from":"Ikeja"', '"from":"Ikeja2"'))
  t.match(tooMany, 'Nothing was imported: the file has 120 problems, each shown where it is.')
  t.equal([...tooMany.matchAll(/<li>line \d+, column \d+: options\[/g)].length, 100, 'the first 100 listed')
  t.match(tooMany, 'And 20 more problems, not listed: fix these and import the file again.')
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from rate_cards where name in ('Console Mistakes', 'Lagos Demo')`
  t.equal(count, 0, 'nothing was imported')
})

t.test('the statement CSV keeps a reference that looks like a formula as text', async (t) => {
  const formula = '=HYPERLINK("https://evil.example","refund")'
  t.ok(await creditWalletAs(sql, 'test', { businessId: ada.businessId, amount: 100, reference: formula, livemode: true }))
  t.ok(await creditWalletAs(sql, 'test', { businessId: ada.businessId, amount: 100, reference: '-2+3', livemode: true }))
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  const csv = await client.get('/console/wallet.csv')
  t.equal(csv.statusCode, 200)
  const lines = csv.body.trim().split('\n')
  t.match(lines.at(-2), /,"'=HYPERLINK\(""https:\/\/evil\.example"",""refund""\)",/, 'a quote before the formula, so no spreadsheet runs it')
  t.match(lines.at(-1), /,'-2\+3,/)
  t.notOk(lines.some((line) => /,[=+@]/.test(line)), 'no cell starts a formula')
  t.match(lines.at(-1), /,credit,1\.00,/, 'amounts stay numbers')
})

t.test('the statement CSV of a long ledger: every entry once, oldest first, streamed batch by batch', async (t) => {
  const cara = await seedAccount(sql, { balance: 0, name: 'Cara Logistics' })
  // 2 500 credits of 1 kobo (more than two of the export's batches), each with its running
  // balance, and the wallet moved with them in the same transaction: the ledger stays the truth.
  await sql.begin(async (tx) => {
    await tx`
      insert into ledger_entries (business_id, livemode, kind, amount, balance_after, reference, seq)
      select ${cara.businessId}, true, 'credit', 1, n, 'bulk-' || n, n from generate_series(1, 2500) as n`
    await tx`update wallets set balance = balance + 2500, entries = entries + 2500 where business_id = ${cara.businessId} and livemode`
  })
  const user = await consoleUser(sql, url, { email: 'owner@cara.example', role: 'business', businessId: cara.businessId })
  await new ConsoleClient(app).setPassword(user.link)
  const client = new ConsoleClient(app)
  await client.logIn(user)
  const csv = await client.get('/console/wallet.csv')
  t.equal(csv.statusCode, 200)
  t.notOk(csv.headers['content-length'], 'streamed, not built whole before the first byte')
  const [header, ...lines] = csv.body.trim().split('\n')
  t.equal(header, 'transaction_id,created_at,kind,amount,balance_after,currency,reference,placement_id,order_id')
  const bulk = lines.filter((line) => line.includes(',bulk-'))
  t.equal(bulk.length, 2500, 'every entry, once')
  t.ok(bulk.every((line, i) => line.includes(`,0.01,${((i + 1) / 100).toFixed(2)},NGN,bulk-${i + 1},`)), 'oldest first, each balance the one before plus its amount')
})

t.test('a form or a filter the console cannot take says which field and why, and nothing is written', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(owner)
  await client.get('/console/webhooks')
  const long = await client.post('/console/webhooks', { mode: 'live', url: 'https://example.com/hooks', description: 'x'.repeat(600) })
  t.equal(long.statusCode, 400)
  t.match(long.body, /The form could not be taken: description must be at most \d+ characters\. Go back, correct it and send it again\./)
  const filtered = await client.get('/console/orders?placement_id=xyz')
  t.equal(filtered.statusCode, 400)
  t.match(filtered.body, /The form could not be taken: placement_id must be a placement id\./)
  const [endpoints] = await sql<{ count: number }[]>`select count(*)::int as count from webhook_endpoints where business_id = ${ada.businessId} and description like 'xxx%'`
  t.equal(endpoints!.count, 0, 'no endpoint was made')
})

t.test("an order page's forms keep their fields apart: every id once, every label on its own input", async (t) => {
  const orderId = await seedOrder(sql, ada.businessId, false)
  const business = new ConsoleClient(app)
  await business.logIn(owner)
  const ops = new ConsoleClient(app)
  await ops.logIn(operator)
  for (const [who, page] of [['business', await business.get(`/console/orders/${orderId}`)], ['operator', await ops.get(`/console/ops/orders/${orderId}`)]] as const) {
    t.equal(page.statusCode, 200, `${who}: ${page.statusCode}`)
    const ids = [...page.body.matchAll(/ id="([^"]+)"/g)].map((match) => match[1])
    t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], `${who}: no id twice`)
    t.ok(ids.includes('field-cancel-reason') && ids.includes('field-advance-reason'), `${who}: the cancel and the advance forms each have their reason`)
  }
})
