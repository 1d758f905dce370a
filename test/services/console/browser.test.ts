import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Page, Response } from 'playwright-core'
import t, { type Test } from 'tap'
import { findOrderById } from '../../../shared/db/orders.js'
import type { Sql } from '../../../shared/db/sql.js'
import { demoCardFile, seedAccount } from '../../helpers/accounts.js'
import { openBrowser, screenshot, submit } from '../../helpers/browser.js'
import { demoCardText, spoiled } from '../../helpers/card-text.js'
import { consoleUser, startConsole, TEST_PASSWORD } from '../../helpers/console.js'
import { PLACE } from '../../helpers/gateway.js'
import { waitForValue } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

/*
 * The console in a real browser (headless Chromium), as its two kinds of user use it: set a
 * password from the one-time link, log in, credit a wallet, make and revoke an API key, import
 * a rate card (a wrong one first), move and cancel orders, and download the wallet statement.
 * The pages have no script: every step is a link or a form that posts and redirects (303).
 * Screenshots of each page land in test-output/console/.
 */

const WAIT_MS = 15_000
const CSV_COLUMNS = ['transaction_id', 'created_at', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'placement_id', 'order_id']

type Placed = { placement_id: string; charged_total: number; orders: { order_id: string; price: number }[] }

/** Kobo of a major-unit amount as the CSV writes it (`-3500.00`, `5000.50`). */
const kobo = (major: string) => Math.round(Number(major) * 100)

/** RFC 4180: quoted fields may hold commas, quotes (doubled) and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let value = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') { value += '"'; i++ }
      else if (char === '"') quoted = false
      else value += char
    } else if (char === '"') quoted = true
    else if (char === ',') { row.push(value); value = '' }
    else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++
      row.push(value); rows.push(row); row = []; value = ''
    } else value += char
  }
  if (value !== '' || row.length > 0) { row.push(value); rows.push(row) }
  return rows
}

async function liveBalance(sql: Sql, businessId: string): Promise<number> {
  const [wallet] = await sql<{ balance: number }[]>`select balance from wallets where business_id = ${businessId} and livemode`
  return Number(wallet.balance)
}

t.test('the console in a browser: both roles, every page they need', async (t) => {
  t.setTimeout(170_000)
  const stack = await startStack(t, { env: { SANDBOX_STEP_S: '86400' } })
  const { sql } = stack.db
  const { url } = await startConsole(t, stack.db.env)
  const business = await seedAccount(sql, { balance: 50000, sandbox: 100000, scopes: ['orders:write', 'orders:read', 'webhooks:write'], name: 'Browser Bazaar' })
  const operator = await consoleUser(sql, url, { email: 'ops@example.com', role: 'operator' })
  const owner = await consoleUser(sql, url, { email: 'owner@bazaar.example', role: 'business', businessId: business.businessId })

  const browser = await openBrowser(t)
  // One context per user: their own cookie jar, so their sessions never mix.
  const opsContext = await browser.newContext({ baseURL: url, acceptDownloads: true })
  const bizContext = await browser.newContext({ baseURL: url, acceptDownloads: true })
  t.teardown(async () => {
    await opsContext.close().catch(() => {})
    await bizContext.close().catch(() => {})
  })
  const ops = await opsContext.newPage()
  const biz = await bizContext.newPage()

  let shots = 0
  const shot = (page: Page, name: string) => screenshot(page, `${String(++shots).padStart(2, '0')}-${name}`)

  async function open(page: Page, to: string): Promise<Response> {
    const response = await page.goto(to)
    if (!response) throw new Error(`no answer for ${to}`)
    return response
  }
  const pathOf = (page: Page) => { const at = new URL(page.url()); return at.pathname + at.search }
  const flash = (page: Page) => page.locator('main p.flash').textContent()
  const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true })
  /** One of the page's summary cards, by its heading. */
  const card = (page: Page, title: string) => page.locator('.card').filter({ has: page.getByRole('heading', { name: title, exact: true }) })

  /** Places through the gateway; a 503 or 409 (not settled yet) is retried with the same Idempotency-Key until a final answer. */
  async function place(t: Test, apiKey: string, shipments: unknown[], idempotencyKey: string): Promise<Placed> {
    const waited = await waitForValue(
      () => stack.gateway.inject({ method: 'POST', url: PLACE, headers: { ...bearer(apiKey), 'idempotency-key': idempotencyKey }, payload: shipments as never }),
      (response) => response.statusCode !== 503 && response.statusCode !== 409, WAIT_MS, 100)
    t.equal(waited.value.statusCode, 201, `placed: ${waited.value.body}`)
    return waited.value.json()
  }

  await t.test('a. each user sets a password from the one-time link', async (t) => {
    for (const [page, user, name] of [[ops, operator, 'operator'], [biz, owner, 'business']] as const) {
      const form = await open(page, user.link)
      t.equal(form.status(), 200, `${name}: the link opens the form`)
      t.match(await page.locator('main').textContent(), `Choose a password for ${user.email}`)
      await shot(page, `set-password-${name}`)
      await page.getByLabel('New password').fill(TEST_PASSWORD)
      await page.getByLabel('Repeat the password').fill(TEST_PASSWORD)
      const answer = await submit(page, button(page, 'Set password'))
      t.equal(answer.status(), 200)
      t.equal(pathOf(page), '/console/login?password_set', `${name}: redirected to the login page`)
      t.equal(await page.getByRole('status').textContent(), 'Your password is set. Log in with it.')
      await shot(page, `password-set-${name}`)
      const reused = await open(page, user.link)
      t.equal(reused.status(), 404, `${name}: the link works once`)
      await open(page, '/console/login')
    }
  })

  await t.test('b. logging in: the operator lands on the businesses, the business on its overview', async (t) => {
    const logIn = async (page: Page, email: string) => {
      await page.getByLabel('Email', { exact: true }).fill(email)
      await page.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD)
      return submit(page, button(page, 'Log in'))
    }
    const opsLanding = await logIn(ops, operator.email)
    t.equal(opsLanding.status(), 200)
    t.equal(pathOf(ops), '/console/ops/businesses', '/console sends an operator to the businesses')
    t.equal(await ops.getByRole('heading', { level: 1 }).textContent(), 'Businesses')
    t.equal(await ops.getByRole('link', { name: 'Browser Bazaar' }).count(), 1, 'the seeded business is listed')
    await shot(ops, 'ops-businesses')

    const bizLanding = await logIn(biz, owner.email)
    t.equal(bizLanding.status(), 200)
    t.equal(pathOf(biz), '/console')
    t.equal(await biz.getByRole('heading', { level: 1 }).textContent(), 'Overview')
    t.equal(await card(biz, 'Live wallet').locator('.balance').textContent(), '₦50,000.00')
    t.equal(await card(biz, 'Test wallet').locator('.balance').textContent(), '₦100,000.00')
    await shot(biz, 'business-overview')

    const refused = await open(biz, '/console/ops/businesses')
    t.equal(refused.status(), 403, 'a business user cannot open operator pages')
    await shot(biz, 'business-refused-ops-page')
  })

  const reference = 'TRF-BROWSER-0001'
  await t.test('c. the operator credits the live wallet once per reference', async (t) => {
    await submit(ops, ops.getByRole('link', { name: 'Browser Bazaar' }))
    t.equal(pathOf(ops), `/console/ops/businesses/${business.businessId}`)
    t.equal(await ops.locator('#live-balance').textContent(), '₦50,000.00')
    await shot(ops, 'ops-business')

    await ops.getByLabel(/^Amount/).fill('5000.50')
    await ops.getByLabel(/^Reference/).fill(reference)
    await ops.getByLabel('Wallet', { exact: true }).selectOption({ label: 'Live' })
    const credited = await submit(ops, button(ops, 'Credit wallet'))
    t.equal(credited.status(), 200)
    t.equal(pathOf(ops), `/console/ops/businesses/${business.businessId}`, 'back on the business page')
    t.equal(await flash(ops), 'Credited ₦5,000.50; the live balance is now ₦55,000.50.')
    t.equal(await ops.locator('#live-balance').textContent(), '₦55,000.50')
    const line = ops.getByRole('table', { name: 'Wallet statement' }).getByRole('row').filter({ hasText: reference })
    t.equal(await line.count(), 1, 'one ledger line with the reference')
    t.same(await line.getByRole('cell').allTextContents().then((cells) => cells.slice(2)), ['credit', '+₦5,000.50', '₦55,000.50', reference])
    t.equal(await liveBalance(sql, business.businessId), 5_500_050, 'the database holds the balance the page shows')
    await shot(ops, 'ops-wallet-credited')

    await ops.getByLabel(/^Amount/).fill('5000.50')
    await ops.getByLabel(/^Reference/).fill(reference)
    await ops.getByLabel('Wallet', { exact: true }).selectOption({ label: 'Live' })
    await submit(ops, button(ops, 'Credit wallet'))
    t.equal(await flash(ops), `Reference ${reference} was credited before; the balance is unchanged at ₦55,000.50.`)
    t.equal(await ops.locator('#live-balance').textContent(), '₦55,000.50')
    t.equal(await ops.getByRole('table', { name: 'Wallet statement' }).getByRole('row').filter({ hasText: reference }).count(), 1, 'still one line')
    t.equal(await liveBalance(sql, business.businessId), 5_500_050, 'credited once')
    await shot(ops, 'ops-wallet-credit-repeated')
  })

  await t.test('d. the business makes an API key, uses it, revokes it', async (t) => {
    await open(biz, '/console/keys')
    t.equal(await biz.getByRole('heading', { level: 1 }).textContent(), 'API keys')
    await shot(biz, 'business-keys')
    await biz.getByRole('checkbox', { name: 'orders:write' }).uncheck()
    await biz.getByRole('checkbox', { name: 'webhooks:write' }).uncheck()
    t.ok(await biz.getByRole('checkbox', { name: 'orders:read' }).isChecked())
    await biz.getByLabel('Mode').selectOption({ label: 'Live' })
    const created = await submit(biz, button(biz, 'Create key'))
    t.equal(created.status(), 201)
    const apiKey = (await biz.locator('#new-api-key').textContent()) ?? ''
    t.match(apiKey, /^ck_live_[0-9A-Za-z]{32}$/, 'the new key is on the page')
    const prefix = apiKey.slice(0, 12)
    const [row] = await sql<{ scopes: string[]; livemode: boolean }[]>`select scopes, livemode from api_keys where display_prefix = ${prefix}`
    t.same(row, { scopes: ['orders:read'], livemode: true }, 'with the scope and mode chosen')
    await shot(biz, 'business-key-created')

    const wallet = await stack.gateway.inject({ method: 'GET', url: '/v2/business/wallet', headers: bearer(apiKey) })
    t.equal(wallet.statusCode, 200, `the API takes the key: ${wallet.body}`)
    t.match(wallet.json(), { balance: 55000.5, currency: 'NGN', livemode: true })

    await submit(biz, button(biz, `Revoke ${prefix}`))
    t.equal(pathOf(biz), '/console/keys')
    t.equal(await flash(biz), `Key ${prefix}… is revoked; the API refuses it from now on.`)
    const keyRow = biz.getByRole('table', { name: 'API keys' }).getByRole('row').filter({ hasText: `${prefix}…` })
    t.match(await keyRow.textContent(), /revoked \d{4}-\d{2}-\d{2}/)
    t.equal(await button(biz, `Revoke ${prefix}`).count(), 0, 'no revoke button any more')
    t.equal(await biz.locator('#new-api-key').count(), 0, 'the key is not shown again')
    await shot(biz, 'business-key-revoked')
    // The gateway caches keys; the revocation reaches it over Redis.
    const refused = await waitForValue(() => stack.gateway.inject({ method: 'GET', url: '/v2/business/wallet', headers: bearer(apiKey) }), (response) => response.statusCode === 401, WAIT_MS, 50)
    t.equal(refused.value.statusCode, 401, 'the API refuses the revoked key')
  })

  await t.test('e. the operator imports a rate card: a wrong one is refused with each problem in place, a right one is imported', async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'console-browser-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    // Written as an operator writes a card (a zone or a price per line), so its lines are theirs.
    const wrongText = spoiled(demoCardText(), [
      ['"name": "Lagos Demo"', '"name": "Browser Card"'],
      ['[3.45,6.48],[3.45,6.41]]}', '[3.45,6.48]]}'], // Lekki's ring no longer closes
      ['{"from":"Island","to":"Ikeja","price":3500}', '{"from":"Island","to":"Nowhere","price":3500}'],
    ])
    const wrongFile = path.join(dir, 'wrong-card.json')
    writeFileSync(wrongFile, wrongText)

    await open(ops, '/console/ops/rate-cards')
    await shot(ops, 'ops-rate-cards')
    await ops.getByLabel('Rate-card file (JSON)').setInputFiles(wrongFile)
    const refused = await submit(ops, button(ops, 'Import rate card'))
    t.equal(refused.status(), 422)
    const alert = await ops.getByRole('alert').textContent()
    t.match(alert, 'Nothing was imported: the file has 2 problems, each shown where it is.')
    t.match(alert, 'line 6, column 21: zones[1].polygon (Lekki): ring is not closed', 'each problem at its line and column of the file as written')
    t.match(alert, 'line 16, column 26: options[0] (Up to 5 kg).prices[3].to: unknown zone Nowhere')
    const problems = ops.locator('ol.listing li.problem')
    t.equal(await problems.count(), 2, 'two lines of the file are marked')
    const zone = problems.filter({ hasText: '"to":"Nowhere"' })
    t.equal(await zone.count(), 1)
    t.equal((await zone.locator('code').textContent())?.trim(), '{"from":"Island","to":"Nowhere","price":3500},', 'the unknown zone is marked at the line of its price, as written')
    t.equal((await zone.locator('xpath=preceding-sibling::li[1]/code').textContent())?.trim(), '{"from":"Island","to":"Mainland","price":2500},', 'the price before it is not marked')
    t.equal(await zone.getByRole('note').textContent(), '⚠ options[0] (Up to 5 kg).prices[3].to: unknown zone Nowhere')
    const ring = problems.filter({ hasText: 'ring is not closed' })
    t.equal((await ring.locator('code').textContent())?.trim(), '{"name":"Lekki","polygon":[[3.45,6.41],[3.62,6.41],[3.62,6.48],[3.45,6.48]]},', 'the open ring is marked at its zone\'s line')
    t.match((await ring.locator('xpath=preceding-sibling::li[1]/code').textContent())?.trim(), /^\{"name":"Island",/, 'after the Island zone')
    t.equal(await ring.getByRole('note').textContent(), '⚠ zones[1].polygon (Lekki): ring is not closed: the last position must repeat the first')
    const [{ count: cards }] = await sql<{ count: number }[]>`select count(*)::int as count from rate_cards where name = 'Browser Card'`
    t.equal(cards, 0, 'nothing was imported')
    await shot(ops, 'ops-rate-card-refused')

    const rightFile = path.join(dir, 'right-card.json')
    writeFileSync(rightFile, JSON.stringify({ ...demoCardFile(), name: 'Browser Card' }, null, 2))
    await ops.getByLabel('Rate-card file (JSON)').setInputFiles(rightFile)
    const imported = await submit(ops, button(ops, 'Import rate card'))
    t.equal(imported.status(), 200)
    t.equal(pathOf(ops), '/console/ops/rate-cards')
    t.equal(await flash(ops), `Imported Browser Card as version 1 with ${demoCardFile().options.length} options.`)
    t.equal(await ops.locator('ol.listing').count(), 0, 'no listing of problems')
    t.match(await ops.getByRole('row').filter({ hasText: 'Browser Card' }).textContent(), /version 1, \d{4}-\d{2}-\d{2}/)
    await shot(ops, 'ops-rate-card-imported')
  })

  let live: Placed
  await t.test('f. a test order advanced by its business, a live order advanced by the operator; both histories shown', async (t) => {
    const test = await place(t, business.testApiKey ?? '', [shipment({ recipient_name: 'Tola Test' })], 'browser-test-order')
    const orderId = test.orders[0].order_id
    await open(biz, '/console/orders?mode=test')
    t.match(await biz.locator('p.mode').textContent(), 'Showing test data.')
    await shot(biz, 'business-test-orders')
    await submit(biz, biz.getByRole('link', { name: orderId }))
    t.equal(pathOf(biz), `/console/orders/${orderId}`)
    t.match(await biz.locator('main').textContent(), 'Test order')
    await shot(biz, 'business-test-order')
    const moves = await biz.getByLabel('Next status').locator('option').allTextContents()
    t.ok(moves.includes('assigned'), `assigned is among the moves: ${moves}`)
    await biz.getByLabel('Next status').selectOption('assigned')
    await submit(biz, button(biz, 'Advance order'))
    t.equal(await flash(biz), `Order ${orderId} is now assigned.`)
    const history = biz.getByRole('table').filter({ has: biz.getByRole('columnheader', { name: 'Reason' }) })
    t.same(await history.locator('tbody tr td:first-child').allTextContents(), ['created', 'assigned'], 'the history shows the move')
    t.equal(await card(biz, 'Status').locator('strong').textContent(), 'assigned')
    t.equal((await findOrderById(sql, orderId))?.status, 'assigned')
    await shot(biz, 'business-test-order-advanced')

    live = await place(t, business.apiKey, [shipment({ recipient_name: 'Lola Live' }), shipment({ recipient_name: 'Cancel Me' })], 'browser-live-orders')
    const liveId = live.orders[0].order_id
    await open(ops, `/console/ops/orders/${liveId}`)
    t.match(await card(ops, 'Courier').textContent(), 'None assigned')
    await shot(ops, 'ops-live-order')
    await ops.getByLabel('Next status').selectOption('assigned')
    await ops.getByLabel(/^Courier name/).fill('Musa Bello')
    await ops.getByLabel(/^Courier phone/).fill('+2348090000000')
    await submit(ops, button(ops, 'Advance order'))
    t.equal(await flash(ops), `Order ${liveId} is now assigned.`)
    t.match(await card(ops, 'Courier').textContent(), /Musa Bello\s*\+2348090000000/)
    const opsHistory = ops.getByRole('table').filter({ has: ops.getByRole('columnheader', { name: 'Reason' }) })
    t.same(await opsHistory.locator('tbody tr td:first-child').allTextContents(), ['created', 'assigned'])
    t.match(await findOrderById(sql, liveId), { status: 'assigned', courier: { name: 'Musa Bello', phone: '+2348090000000' } })
    await shot(ops, 'ops-live-order-advanced')
  })

  await t.test('g. the business cancels a live order and sees the refund', async (t) => {
    const [, { order_id: orderId, price }] = live.orders
    t.equal(price, 3500, 'the demo card\'s Island to Ikeja bike price')
    const before = await liveBalance(sql, business.businessId)
    await open(biz, `/console/orders/${orderId}`)
    t.equal(await card(biz, 'Status').locator('strong').textContent(), 'created')
    await shot(biz, 'business-live-order')
    await submit(biz, button(biz, 'Cancel order'))
    t.equal(await flash(biz), `Order ${orderId} is cancelled. ₦3,500.00 was refunded to the wallet.`)
    t.equal(await card(biz, 'Status').locator('strong').textContent(), 'cancelled')
    t.match(await card(biz, 'Price').textContent(), 'Refunded ₦3,500.00')
    t.equal(await button(biz, 'Cancel order').count(), 0, 'a cancelled order has no cancel button')
    t.match(await findOrderById(sql, orderId), { status: 'cancelled', refundedAmount: 350_000 })
    t.equal(await liveBalance(sql, business.businessId), before + 350_000, 'the price is back in the wallet')
    await shot(biz, 'business-live-order-cancelled')

    await open(biz, '/console/wallet')
    const refund = biz.getByRole('table', { name: 'Wallet statement' }).getByRole('row').filter({ hasText: orderId })
    t.equal(await refund.count(), 1, 'one ledger line for the order')
    t.same((await refund.getByRole('cell').allTextContents()).slice(2), ['refund', '+₦3,500.00', await biz.locator('#wallet-balance').textContent(), orderId])
    await shot(biz, 'business-wallet')
  })

  await t.test('h. the statement CSV replays to the wallet balance', async (t) => {
    if (pathOf(biz) !== '/console/wallet') await open(biz, '/console/wallet')
    const [download] = await Promise.all([biz.waitForEvent('download'), biz.getByRole('link', { name: 'Download the statement (CSV)' }).click()])
    t.match(download.suggestedFilename(), /^statement-live-\d{4}-\d{2}-\d{2}\.csv$/)
    const file = await download.path()
    const [header, ...rows] = parseCsv(readFileSync(file, 'utf8'))
    t.same(header, CSV_COLUMNS)
    const column = (name: string) => rows.map((row) => row[CSV_COLUMNS.indexOf(name)])
    t.same(column('kind'), ['credit', 'credit', 'debit', 'refund'], 'seed, operator credit, placement, refund: oldest first')
    const times = column('created_at').map((at) => Date.parse(at))
    t.same(times, [...times].sort((a, b) => a - b), 'in time order')
    t.same(column('amount').map(kobo), [5_000_000, 500_050, -700_000, 350_000], 'signed amounts in naira')
    t.same(column('reference').slice(0, 2), ['seed', reference])
    t.equal(column('placement_id')[2], live.placement_id)
    t.equal(column('order_id')[3], live.orders[1].order_id)
    t.ok(column('currency').every((currency) => currency === 'NGN'))
    let running = 0
    const replayed = column('amount').map((amount) => (running += kobo(amount)))
    t.same(column('balance_after').map(kobo), replayed, 'each balance_after is the running sum of the amounts')
    t.equal(replayed.at(-1), await liveBalance(sql, business.businessId), 'and the last one is the wallet balance')
    await shot(biz, 'business-wallet-downloaded')
  })

  await ops.close()
  await biz.close()
})
