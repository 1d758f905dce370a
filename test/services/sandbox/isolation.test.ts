import t, { type Test } from 'tap'
import { seedAccount, type SeededAccount } from '../../helpers/accounts.js'
import { walletsAgainstLedger } from '../../helpers/db.js'
import { assertError, ISO_UTC, PLACE, QUOTE, quoteBody } from '../../helpers/gateway.js'
import { runOperatorCli, type CliRun } from '../../helpers/operator-cli.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { secretHash } from '../../../shared/secret-hash.js'

// DESIGN.md section 11 (the sandbox): everything a test key makes is test data, livemode false,
// invisible to live keys and the reverse (404), with its own wallet, events, sequences and
// Idempotency-Keys; rate cards are shared. Section 5's CLI with `--mode test`.

const ORDERS = '/v2/business/orders'
const WALLET = '/v2/business/wallet'
const TRANSACTIONS = '/v2/business/wallet/transactions'
const EVENTS = '/v2/business/events'
const ENDPOINTS = '/v2/business/webhook-endpoints'
const advanceUrl = (orderId: string) => `/v2/business/sandbox/orders/${orderId}/advance`
// The bike parcel of the helpers (Island → Ikeja, 2 kg) on the demo card.
const PRICE = 3500
const kobo = (major: number) => Math.round(major * 100)

type Resource = Record<string, any>
type Method = 'GET' | 'POST' | 'DELETE'

t.test('sandbox isolation: test and live data never meet', async (t) => {
  // A step far longer than this file: the sandbox courier never moves an order here, so the
  // statuses, versions and event counts below are the ones the test made.
  const { gateway, db } = await startStack(t, { env: { SANDBOX_STEP_S: '3600' } })
  const { sql } = db

  const call = (apiKey: string, method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    gateway.inject({ method, url, headers: { ...bearer(apiKey), ...headers }, ...(payload !== undefined && { payload: payload as never }) })
  const read = async (t: Test, apiKey: string, url: string): Promise<any> => {
    const response = await call(apiKey, 'GET', url)
    t.equal(response.statusCode, 200, `GET ${url}: ${response.body}`)
    return response.json()
  }
  const place = async (t: Test, apiKey: string, shipments: unknown[], headers: Record<string, string> = {}): Promise<Resource> => {
    const response = await call(apiKey, 'POST', PLACE, shipments, headers)
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json()
  }
  const notFound = async (t: Test, apiKey: string, method: Method, url: string, message: string, payload?: unknown) => {
    assertError(t, await call(apiKey, method, url, payload), { status: 404, path: url, message })
  }
  /** The wallet row of a mode, in kobo, straight from Postgres. */
  const balanceOf = async (businessId: string, livemode: boolean): Promise<number> =>
    (await sql`select balance from wallets where business_id = ${businessId} and livemode = ${livemode}`)[0]!.balance
  const orderRow = async (orderId: string) => (await sql`select status, version, livemode, shipment from orders where id = ${orderId}`)[0]!
  /** Every page of an endpoint that pages with next_cursor. */
  const allPages = async (t: Test, apiKey: string, url: string): Promise<Resource[]> => {
    const items: Resource[] = []
    let cursor: string | null = null
    for (let pages = 0; pages < 50; pages++) {
      const page: Resource = await read(t, apiKey, `${url}${url.includes('?') ? '&' : '?'}limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      items.push(...page.data)
      cursor = page.next_cursor
      if (!page.has_more) break
    }
    return items
  }
  const allEvents = async (t: Test, apiKey: string): Promise<Resource[]> => {
    const events: Resource[] = []
    for (let pages = 0; pages < 50; pages++) {
      const page: Resource = await read(t, apiKey, `${EVENTS}?limit=3&after=${events.at(-1)?.sequence ?? 0}`)
      events.push(...page.data)
      if (!page.has_more) break
    }
    return events
  }

  // One business with both modes: 100 000 NGN live, 50 000 NGN in its test wallet.
  const account: SeededAccount = await seedAccount(sql, { balance: 100_000, sandbox: 50_000, scopes: ['orders:write', 'webhooks:write'] })
  const live = account.apiKey
  const test = account.testApiKey!
  t.match(test, /^ck_test_[0-9A-Za-z]{32}$/, 'the sandbox key has the ck_test_ shape')
  t.match(live, /^ck_live_[0-9A-Za-z]{32}$/)

  // The same Idempotency-Key and the same body in both modes: two placements.
  const body = [shipment(), shipment({ sandbox_scenario: 'manual' })]
  const livePlaced = await place(t, live, body, { 'idempotency-key': 'same-key-both-modes' })
  const testPlaced = await place(t, test, body, { 'idempotency-key': 'same-key-both-modes' })
  const liveOrders: string[] = livePlaced.orders.map((order: Resource) => order.order_id)
  const testOrders: string[] = testPlaced.orders.map((order: Resource) => order.order_id)

  t.test('an Idempotency-Key is per mode: the same key live and test makes two placements, each replays its own', async (t) => {
    t.not(testPlaced.placement_id, livePlaced.placement_id, 'two placements')
    t.equal(livePlaced.charged_total, 2 * PRICE)
    t.equal(testPlaced.charged_total, 2 * PRICE)
    t.equal(new Set([...liveOrders, ...testOrders]).size, 4, 'four orders')
    const rows = await sql`select id, livemode, status from placements where business_id = ${account.businessId} and idempotency_key = 'same-key-both-modes' order by livemode`
    t.same(rows.map((row) => [row.id, row.livemode, row.status]), [[testPlaced.placement_id, false, 'succeeded'], [livePlaced.placement_id, true, 'succeeded']])

    for (const [apiKey, placed] of [[live, livePlaced], [test, testPlaced]] as const) {
      const replay = await call(apiKey, 'POST', PLACE, body, { 'idempotency-key': 'same-key-both-modes' })
      t.equal(replay.statusCode, 201, replay.body)
      t.equal(replay.headers['idempotent-replayed'], 'true')
      t.strictSame(replay.json(), placed, 'the replay is the placement of the caller\'s mode')
      // A different body under the key is refused in each mode on its own.
      assertError(t, await call(apiKey, 'POST', PLACE, [shipment()], { 'idempotency-key': 'same-key-both-modes' }), {
        status: 422, path: PLACE, message: 'Idempotency-Key was already used with a different request body', extra: { placement_id: placed.placement_id },
      })
    }
    const [{ count }] = await sql`select count(*)::int from placements where business_id = ${account.businessId}`
    t.equal(count, 2, 'replays placed nothing more')
  })

  t.test('test placements debit the test wallet only', async (t) => {
    t.equal(await balanceOf(account.businessId, true), kobo(100_000 - 2 * PRICE), 'live: 100 000 less the live placement')
    t.equal(await balanceOf(account.businessId, false), kobo(50_000 - 2 * PRICE), 'test: 50 000 less the test placement')
    const debits = await sql`select livemode, placement_id, amount from ledger_entries where business_id = ${account.businessId} and kind = 'debit' order by livemode`
    t.same(debits.map((row) => [row.livemode, row.placementId, row.amount]), [
      [false, testPlaced.placement_id, kobo(2 * PRICE)],
      [true, livePlaced.placement_id, kobo(2 * PRICE)],
    ])
  })

  t.test('orders: each key reads and lists only its own mode; livemode and sandbox_scenario as the mode says', async (t) => {
    for (const orderId of liveOrders) {
      await notFound(t, test, 'GET', `${ORDERS}/${orderId}`, `Order ${orderId} was not found`)
      const order = await read(t, live, `${ORDERS}/${orderId}`)
      t.equal(order.livemode, true)
      t.notOk('sandbox_scenario' in order, 'a live order shows no sandbox_scenario')
    }
    for (const orderId of testOrders) {
      await notFound(t, live, 'GET', `${ORDERS}/${orderId}`, `Order ${orderId} was not found`)
      const order = await read(t, test, `${ORDERS}/${orderId}`)
      t.equal(order.livemode, false, `${orderId} is a test order`)
      t.equal(order.placement_id, testPlaced.placement_id)
    }
    const [testDefault, testManual] = await Promise.all(testOrders.map((id) => read(t, test, `${ORDERS}/${id}`)))
    t.equal(testDefault.sandbox_scenario, 'deliver', 'the default scenario is shown on a test order')
    t.equal(testManual.sandbox_scenario, 'manual', 'the scenario sent is kept and shown')

    const liveList = await allPages(t, live, ORDERS)
    const testList = await allPages(t, test, ORDERS)
    t.ok(liveList.length >= 2 && testList.length >= 2)
    t.ok(liveList.every((order) => order.livemode === true), 'the live list holds live orders only')
    t.ok(testList.every((order) => order.livemode === false), 'the test list holds test orders only')
    t.notOk(liveList.some((order) => testOrders.includes(order.order_id)), 'no test order in the live list')
    t.notOk(testList.some((order) => liveOrders.includes(order.order_id)), 'no live order in the test list')
    const [{ liveCount, testCount }] = await sql`select count(*) filter (where livemode)::int as live_count, count(*) filter (where not livemode)::int as test_count
      from orders where business_id = ${account.businessId}`
    t.equal(liveList.length, liveCount, 'the live list holds every live order')
    t.equal(testList.length, testCount, 'the test list holds every test order')
    // Filtering by the other mode's placement finds nothing.
    t.same((await read(t, live, `${ORDERS}?placement_id=${testPlaced.placement_id}`)).data, [])
    t.same((await read(t, test, `${ORDERS}?placement_id=${livePlaced.placement_id}`)).data, [])
    t.same((await read(t, test, `${ORDERS}?placement_id=${testPlaced.placement_id}`)).data.map((order: Resource) => order.order_id).sort(), [...testOrders].sort())
  })

  t.test('placements: GET /placements/{id} across modes is 404', async (t) => {
    await notFound(t, test, 'GET', `/v2/business/placements/${livePlaced.placement_id}`, `Placement ${livePlaced.placement_id} was not found`)
    await notFound(t, live, 'GET', `/v2/business/placements/${testPlaced.placement_id}`, `Placement ${testPlaced.placement_id} was not found`)
    const own = await call(test, 'GET', `/v2/business/placements/${testPlaced.placement_id}`)
    t.equal(own.statusCode, 201)
    t.strictSame(own.json(), testPlaced, 'the test key reads its own placement')
    const ownLive = await call(live, 'GET', `/v2/business/placements/${livePlaced.placement_id}`)
    t.equal(ownLive.statusCode, 201)
    t.strictSame(ownLive.json(), livePlaced)
  })

  t.test('cancel across modes is 404 and moves nothing; a test cancel refunds the test wallet', async (t) => {
    const liveBefore = await balanceOf(account.businessId, true)
    const testBefore = await balanceOf(account.businessId, false)
    await notFound(t, test, 'POST', `${ORDERS}/${liveOrders[0]}/cancel`, `Order ${liveOrders[0]} was not found`)
    await notFound(t, live, 'POST', `${ORDERS}/${testOrders[0]}/cancel`, `Order ${testOrders[0]} was not found`)
    t.match(await orderRow(liveOrders[0]!), { status: 'created', version: 1 }, 'the live order is untouched')
    t.match(await orderRow(testOrders[0]!), { status: 'created', version: 1 }, 'the test order is untouched')
    t.equal(await balanceOf(account.businessId, true), liveBefore)
    t.equal(await balanceOf(account.businessId, false), testBefore)

    const cancelled = await call(test, 'POST', `${ORDERS}/${testOrders[0]}/cancel`, { reason: 'changed my mind' })
    t.equal(cancelled.statusCode, 200, cancelled.body)
    t.match(cancelled.json(), { order_id: testOrders[0], livemode: false, status: 'cancelled', version: 2, refunded_amount: PRICE })
    t.equal(await balanceOf(account.businessId, false), testBefore + kobo(PRICE), 'the refund goes to the test wallet')
    t.equal(await balanceOf(account.businessId, true), liveBefore, 'the live wallet is unchanged')
    const refunds = await sql`select livemode, order_id, amount from ledger_entries where business_id = ${account.businessId} and kind = 'refund'`
    t.same(refunds.map((row) => [row.livemode, row.orderId, row.amount]), [[false, testOrders[0], kobo(PRICE)]], 'one refund entry, in the test ledger')
  })

  t.test('sandbox advance with a live key is 404, whatever the order', async (t) => {
    for (const orderId of [liveOrders[1]!, testOrders[1]!]) {
      const url = advanceUrl(orderId)
      assertError(t, await call(live, 'POST', url, { to: 'assigned' }), { status: 404, path: url, message: `Order ${orderId} was not found` })
      assertError(t, await call(live, 'POST', url, {}), { status: 404, path: url, message: `Order ${orderId} was not found` })
      t.match(await orderRow(orderId), { status: 'created', version: 1 }, `${orderId} did not move`)
    }
  })

  t.test('events: per mode, livemode as the mode, sequences from 1 without gaps, 404 across modes', async (t) => {
    const liveEvents = await allEvents(t, live)
    const testEvents = await allEvents(t, test)
    t.same(liveEvents.map((event) => event.type), ['order.created', 'order.created'], 'live: the two live orders were created')
    t.same(testEvents.map((event) => event.type), ['order.created', 'order.created', 'order.cancelled'], 'test: two created, one cancelled')
    t.same(liveEvents.map((event) => event.sequence), [1, 2], 'live sequences count from 1')
    t.same(testEvents.map((event) => event.sequence), [1, 2, 3], 'test sequences count from 1 on their own')
    t.ok(liveEvents.every((event) => event.livemode === true && event.data.order.livemode === true), 'live events are livemode true')
    t.ok(testEvents.every((event) => event.livemode === false && event.data.order.livemode === false), 'test events are livemode false')
    t.same(liveEvents.map((event) => event.data.order.order_id).sort(), [...liveOrders].sort())
    t.same(testEvents.map((event) => event.data.order.order_id), [testOrders[0], testOrders[1], testOrders[0]])
    t.same((await read(t, test, `${EVENTS}?type=order.cancelled`)).data.map((event: Resource) => event.sequence), [3])
    t.same((await read(t, live, `${EVENTS}?type=order.cancelled`)).data, [], 'the test cancel is no live event')

    for (const event of liveEvents) {
      await notFound(t, test, 'GET', `${EVENTS}/${event.id}`, `Event ${event.id} was not found`)
      t.strictSame(await read(t, live, `${EVENTS}/${event.id}`), event)
    }
    for (const event of testEvents) {
      await notFound(t, live, 'GET', `${EVENTS}/${event.id}`, `Event ${event.id} was not found`)
      await notFound(t, live, 'POST', `${EVENTS}/${event.id}/redeliver`, `Event ${event.id} was not found`)
      t.strictSame(await read(t, test, `${EVENTS}/${event.id}`), event)
    }
    await notFound(t, test, 'POST', `${EVENTS}/${liveEvents[0]!.id}/redeliver`, `Event ${liveEvents[0]!.id} was not found`)
    const [{ count }] = await sql`select count(*)::int from webhook_deliveries`
    t.equal(count, 0, 'a redeliver across modes queued nothing')
  })

  t.test('wallet and transactions: each key sees its own wallet and its own ledger', async (t) => {
    const testWallet = await read(t, test, WALLET)
    const liveWallet = await read(t, live, WALLET)
    t.strictSame(Object.keys(testWallet).sort(), ['balance', 'currency', 'livemode', 'updated_at'])
    t.match(testWallet, { balance: 50_000 - PRICE, currency: 'NGN', livemode: false, updated_at: ISO_UTC })
    t.match(liveWallet, { balance: 100_000 - 2 * PRICE, currency: 'NGN', livemode: true, updated_at: ISO_UTC })

    const testEntries = await allPages(t, test, TRANSACTIONS)
    const liveEntries = await allPages(t, live, TRANSACTIONS)
    t.same(testEntries.map((entry) => [entry.type, entry.amount]), [['refund', PRICE], ['debit', 2 * PRICE], ['credit', 50_000]], 'test: opening credit, the test debit, the test refund')
    t.same(liveEntries.map((entry) => [entry.type, entry.amount]), [['debit', 2 * PRICE], ['credit', 100_000]], 'live: its own credit and debit only')
    t.equal(testEntries[1]!.placement_id, testPlaced.placement_id)
    t.equal(liveEntries[0]!.placement_id, livePlaced.placement_id)
    t.equal(testEntries[0]!.order_id, testOrders[0])
    t.equal(testEntries[0]!.balance_after, testWallet.balance, 'the newest test entry ends at the test balance')
    t.equal(liveEntries[0]!.balance_after, liveWallet.balance, 'the newest live entry ends at the live balance')
    // Oldest first, each statement replays to its own wallet.
    for (const [entries, wallet] of [[testEntries, testWallet], [liveEntries, liveWallet]] as const) {
      let running = 0
      for (const entry of [...entries].reverse()) {
        running += entry.type === 'debit' ? -kobo(entry.amount) : kobo(entry.amount)
        t.equal(kobo(entry.balance_after), running, `${entry.id} balance_after`)
      }
      t.equal(running, kobo(wallet.balance))
    }
    t.same(new Set([...testEntries, ...liveEntries].map((entry) => entry.id)).size, testEntries.length + liveEntries.length, 'no entry in both statements')
  })

  t.test('webhook endpoints: per mode in lists, 404 across modes, the limit of 10 per mode', async (t) => {
    const create = async (apiKey: string, path: string): Promise<Resource> => {
      const response = await call(apiKey, 'POST', ENDPOINTS, { url: `http://127.0.0.1:9/${path}` })
      t.equal(response.statusCode, 201, response.body)
      return response.json()
    }
    const liveEndpoint = await create(live, 'live')
    const testEndpoint = await create(test, 'test')
    t.equal(testEndpoint.livemode, false, 'an endpoint made with a test key is a test endpoint')
    t.equal(liveEndpoint.livemode, true)
    t.same((await read(t, live, ENDPOINTS)).data.map((endpoint: Resource) => endpoint.id), [liveEndpoint.id], 'the live list holds the live endpoint only')
    t.same((await read(t, test, ENDPOINTS)).data.map((endpoint: Resource) => endpoint.id), [testEndpoint.id], 'the test list holds the test endpoint only')

    for (const [apiKey, endpoint] of [[live, testEndpoint], [test, liveEndpoint]] as const) {
      const message = `Webhook endpoint ${endpoint.id} was not found`
      await notFound(t, apiKey, 'GET', `${ENDPOINTS}/${endpoint.id}/deliveries`, message)
      await notFound(t, apiKey, 'POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`, message)
      await notFound(t, apiKey, 'DELETE', `${ENDPOINTS}/${endpoint.id}`, message)
    }
    const [{ count }] = await sql`select count(*)::int from webhook_endpoints where business_id = ${account.businessId}`
    t.equal(count, 2, 'a delete across modes deleted nothing')

    // Ten live endpoints are the live limit; the test mode has its own ten.
    for (let n = 2; n <= 10; n++) await create(live, `live-${n}`)
    assertError(t, await call(live, 'POST', ENDPOINTS, { url: 'http://127.0.0.1:9/live-11' }), { status: 409, path: ENDPOINTS, message: 'A business can have at most 10 webhook endpoints' })
    const second = await create(test, 'test-2')
    t.same((await read(t, test, ENDPOINTS)).data.map((endpoint: Resource) => endpoint.id), [testEndpoint.id, second.id], 'the test mode counts its own endpoints')

    const removed = await call(test, 'DELETE', `${ENDPOINTS}/${second.id}`)
    t.equal(removed.statusCode, 204, 'a test key deletes its own endpoint')
    t.equal((await read(t, live, ENDPOINTS)).data.length, 10, 'the live endpoints are all still there')
  })

  t.test('held quotes belong to their mode: a test quote_id is unknown to a live shipment and the reverse', async (t) => {
    const quote = async (apiKey: string) => {
      const response = await call(apiKey, 'POST', QUOTE, quoteBody())
      t.equal(response.statusCode, 200, response.body)
      t.match(response.json().quote_id, /^qt_[0-9A-HJKMNP-TV-Z]{16}$/)
      return response.json() as Resource
    }
    const testQuote = await quote(test)
    const liveQuote = await quote(live)
    t.equal(testQuote.price, liveQuote.price, 'rate cards are shared: the same price in both modes')
    const liveBefore = await balanceOf(account.businessId, true)
    const testBefore = await balanceOf(account.businessId, false)

    for (const [apiKey, foreign] of [[live, testQuote], [test, liveQuote]] as const) {
      const refused = await call(apiKey, 'POST', PLACE, [shipment({ quote_id: foreign.quote_id })])
      t.equal(refused.statusCode, 400, refused.body)
      t.match(refused.json(), { statusCode: 400, path: PLACE, message: 'One or more orders could not be placed', placement_id: /^[0-9a-f-]{36}$/ })
      t.strictSame(refused.json().errors, [{ index: 0, message: `[0].quote_id ${foreign.quote_id} is unknown` }])
    }
    t.equal(await balanceOf(account.businessId, true), liveBefore, 'nothing charged live')
    t.equal(await balanceOf(account.businessId, false), testBefore, 'nothing charged in test')

    const testUse = await place(t, test, [shipment({ quote_id: testQuote.quote_id, sandbox_scenario: 'manual' })])
    const liveUse = await place(t, live, [shipment({ quote_id: liveQuote.quote_id })])
    t.equal(testUse.charged_total, testQuote.price)
    t.equal(liveUse.charged_total, liveQuote.price)
    t.equal((await read(t, test, `${ORDERS}/${testUse.orders[0].order_id}`)).quote_id, testQuote.quote_id, 'the test order records its quote')
    t.equal(await balanceOf(account.businessId, false), testBefore - kobo(testQuote.price))
    t.equal(await balanceOf(account.businessId, true), liveBefore - kobo(liveQuote.price))
  })

  t.test('sandbox_scenario with a live key: accepted, not stored, not shown', async (t) => {
    // Any value, one no test key could send included (DESIGN 11: ignored in live mode, like an unknown field).
    for (const scenario of ['fail', 'manual', 'unassign', 'deliver', 'teleport', 42]) {
      const placed = await place(t, live, [shipment({ sandbox_scenario: scenario })])
      const orderId = placed.orders[0].order_id
      const order = await read(t, live, `${ORDERS}/${orderId}`)
      t.notOk('sandbox_scenario' in order, `${scenario}: not shown on the order`)
      t.equal(order.livemode, true)
      t.notOk('sandbox_scenario' in (await orderRow(orderId)).shipment, `${scenario}: not stored on the order`)
      const [placement] = await sql`select shipments from placements where id = ${placed.placement_id}`
      t.notOk(JSON.stringify(placement!.shipments).includes('sandbox_scenario'), `${scenario}: not stored on the placement`)
      const [event] = await sql`select data from events where order_id = ${orderId}`
      t.notOk('sandbox_scenario' in event!.data.order, `${scenario}: not in the order.created event`)
    }
    // Ignored means ignored: with the same Idempotency-Key, a live body with a scenario and one without are the same request.
    const first = await place(t, live, [shipment({ sandbox_scenario: 'fail' })], { 'idempotency-key': 'live-scenario' })
    const again = await call(live, 'POST', PLACE, [shipment()], { 'idempotency-key': 'live-scenario' })
    t.equal(again.statusCode, 201, again.body)
    t.equal(again.json().placement_id, first.placement_id, 'the same placement')
  })

  t.test('operator CLI: key:create --mode test, wallet:credit and wallet:show --mode test', async (t) => {
    const owner = await seedAccount(sql, { balance: 500, name: 'Cli Sandbox Ltd' })
    const other = await seedAccount(sql, { balance: 10, name: 'No Sandbox Ltd' })
    const counts = async () => (await sql`select
      (select count(*)::int from api_keys) as keys, (select count(*)::int from wallets) as wallets,
      (select count(*)::int from ledger_entries) as ledger, (select coalesce(sum(balance), 0)::bigint from wallets) as balances`)[0]
    const refuses = async (t: Test, args: string[], message: RegExp) => {
      const before = await counts()
      const run: CliRun = await runOperatorCli(db, args)
      t.equal(run.code, 1, `${args.join(' ')} exits 1`)
      t.equal(run.stdout, '', 'prints nothing on stdout')
      t.match(run.stderr.trim(), message)
      t.equal(run.stderr.trim().split('\n').length, 1, `one line on stderr: ${run.stderr}`)
      t.same(await counts(), before, 'nothing changed')
    }

    // No test wallet before the first test key.
    await refuses(t, ['wallet:credit', '--business', owner.businessId, '--amount', '100', '--mode', 'test'], /has no test wallet/)
    await refuses(t, ['wallet:show', '--business', owner.businessId, '--mode', 'test'], /has no test wallet/)

    const first = await runOperatorCli(db, ['key:create', '--business', owner.businessId, '--scopes', 'orders:write', '--mode', 'test'])
    t.equal(first.code, 0, first.stderr)
    t.match(first.json?.api_key, /^ck_test_[0-9A-Za-z]{32}$/, 'a ck_test_ key')
    t.equal(first.json.livemode, false)
    const [stored] = await sql`select livemode, business_id from api_keys where id = ${first.json.key_id}`
    t.same([stored!.livemode, stored!.businessId], [false, owner.businessId])
    t.equal((await sql`select count(*)::int from api_keys where key_hash = ${secretHash(first.json.api_key)}`)[0]!.count, 1, 'stored by its hash')
    t.equal(await balanceOf(owner.businessId, false), kobo(1_000_000), 'the test wallet opens with SANDBOX_WALLET_START (1 000 000 NGN)')
    t.equal(await balanceOf(owner.businessId, true), kobo(500), 'the live wallet is untouched')

    // The key works at the gateway, in test mode.
    t.match(await read(t, first.json.api_key, WALLET), { balance: 1_000_000, livemode: false })

    const second = await runOperatorCli(db, ['key:create', '--business', owner.businessId, '--scopes', 'orders:read', '--mode', 'test'], { SANDBOX_WALLET_START: '5' })
    t.equal(second.code, 0, second.stderr)
    t.match(second.json?.api_key, /^ck_test_/)
    t.equal(await balanceOf(owner.businessId, false), kobo(1_000_000), 'a second test key credits nothing')
    const opening = await sql`select amount from ledger_entries where business_id = ${owner.businessId} and not livemode`
    t.same(opening.map((row) => row.amount), [kobo(1_000_000)], 'one opening credit')

    const liveKey = await runOperatorCli(db, ['key:create', '--business', owner.businessId, '--scopes', 'orders:write'])
    t.equal(liveKey.code, 0, liveKey.stderr)
    t.match(liveKey.json?.api_key, /^ck_live_/, 'without --mode the key is live')
    t.equal(liveKey.json.livemode, true)
    const liveExplicit = await runOperatorCli(db, ['key:create', '--business', owner.businessId, '--scopes', 'orders:write', '--mode', 'live'])
    t.match(liveExplicit.json?.api_key, /^ck_live_/, '--mode live is live')

    // SANDBOX_WALLET_START is read from the environment.
    const custom = await runOperatorCli(db, ['key:create', '--business', other.businessId, '--scopes', 'orders:write', '--mode', 'test'], { SANDBOX_WALLET_START: '2500.5' })
    t.equal(custom.code, 0, custom.stderr)
    t.equal(await balanceOf(other.businessId, false), kobo(2500.5), 'the opening credit is SANDBOX_WALLET_START')

    const credited = await runOperatorCli(db, ['wallet:credit', '--business', owner.businessId, '--amount', '250.25', '--mode', 'test', '--reference', 'sandbox-topup-1'])
    t.equal(credited.code, 0, credited.stderr)
    t.strictSame(credited.json, { business_id: owner.businessId, balance: 1_000_250.25, currency: 'NGN', livemode: false })
    t.equal(await balanceOf(owner.businessId, true), kobo(500), 'a test credit leaves the live wallet alone')
    const repeated = await runOperatorCli(db, ['wallet:credit', '--business', owner.businessId, '--amount', '250.25', '--mode', 'test', '--reference', 'sandbox-topup-1'])
    t.equal(repeated.code, 0, repeated.stderr)
    t.equal(repeated.json.balance, 1_000_250.25, 'a repeated reference credits once in test mode too')
    // The same reference in live mode is another wallet's reference.
    const liveCredit = await runOperatorCli(db, ['wallet:credit', '--business', owner.businessId, '--amount', '1', '--reference', 'sandbox-topup-1'])
    t.equal(liveCredit.code, 0, liveCredit.stderr)
    t.strictSame(liveCredit.json, { business_id: owner.businessId, balance: 501, currency: 'NGN', livemode: true })

    const shownTest = await runOperatorCli(db, ['wallet:show', '--business', owner.businessId, '--mode', 'test'])
    t.strictSame(shownTest.json, { business_id: owner.businessId, balance: 1_000_250.25, currency: 'NGN', livemode: false })
    const shownLive = await runOperatorCli(db, ['wallet:show', '--business', owner.businessId])
    t.strictSame(shownLive.json, { business_id: owner.businessId, balance: 501, currency: 'NGN', livemode: true })
    t.match(await read(t, first.json.api_key, WALLET), { balance: 1_000_250.25, livemode: false }, 'the API shows the credited test wallet')

    for (const args of [
      ['key:create', '--business', owner.businessId, '--scopes', 'orders:write', '--mode', 'bogus'],
      ['wallet:credit', '--business', owner.businessId, '--amount', '5', '--mode', 'bogus'],
      ['wallet:show', '--business', owner.businessId, '--mode', 'bogus'],
    ]) {
      await refuses(t, args, /--mode must be one of live, test, got 'bogus'/)
    }
  })

  t.test('at the end, every wallet (business, mode) equals the sum of its ledger', async (t) => {
    const wallets = await walletsAgainstLedger(sql)
    const mine = wallets.filter((wallet) => wallet.businessId === account.businessId)
    t.same(mine.map((wallet) => wallet.livemode).sort(), [false, true], 'the business has a wallet in each mode')
    for (const wallet of wallets) {
      t.equal(wallet.balance, wallet.ledger, `${wallet.businessId} ${wallet.livemode ? 'live' : 'test'}: balance = credits − debits + refunds`)
      t.ok(wallet.balance >= 0)
    }
  })
})
