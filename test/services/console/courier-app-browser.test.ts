import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Locator, Page } from 'playwright-core'
import t from 'tap'
import { capture, openBrowser, submit } from '../../helpers/browser.js'
import { TEST_PASSWORD } from '../../helpers/console.js'
import { startLauncher } from '../../helpers/launcher.js'
import { pngPhoto } from '../../helpers/png.js'
import { projectRoot, waitForValue } from '../../helpers/processes.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'

/*
 * The courier web app in a phone's browser (headless Chromium at 390×844, location allowed, the
 * rider standing at the pickup), against the built launcher with the dispatcher running: the demo
 * rider logs in with the phone and code `npm start` prints, goes available (the page shares the
 * browser's position), gets the offer of an order placed through the API, accepts, picks up and
 * delivers with the PIN (read off the recipient's tracking page) and a photo. The tracking page,
 * open beside it, follows each step to delivered; the business's order page shows the proof.
 * Screenshots of each page go to test-output/courier-app/ (docs/screenshots/ for docs/courier-app.md and
 * the README with SCREENSHOTS_TO_DOCS=1).
 */

const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const PHONE = { width: 390, height: 844 }
const WAIT_MS = 45_000
// test-output/courier-app/ on every run; with SCREENSHOTS_TO_DOCS=1, the docs' own copies, so a
// plain test run leaves the tracked images alone.
const shots = process.env.SCREENSHOTS_TO_DOCS === '1' ? path.join(projectRoot, 'docs', 'screenshots') : path.join(projectRoot, 'test-output', 'courier-app')

t.test('a rider delivers an order in the courier app; the recipient and the business follow it', async (t) => {
  t.setTimeout(240_000)
  const storage = mkdtempSync(path.join(tmpdir(), 'courier-app-browser-'))
  t.teardown(() => rmSync(storage, { recursive: true, force: true }))
  const launched = await startLauncher(t, { databaseUrl, redisUrl, env: { DISPATCH_OFFER_S: '90', DISPATCH_RETRY_S: '1', STORAGE_DIR: storage } })
  const printed = await waitForValue(async () => launched.output(), (output) => /^Courier app: /m.test(output), 10_000, 50)
  const app = /^Courier app: (http:\/\/\S+)\/courier \(demo rider: phone (\+\d+), one-time code (\d{6}), valid 15 min;/m.exec(printed.value)
  t.ok(app, 'npm start prints the courier app, the demo rider\'s phone and a one-time code')
  const [, consoleUrl, phone, code] = app!
  const passwordLink = /^ {2}business demo@example\.com: set a password at (\S+) /m.exec(printed.value)?.[1]
  t.ok(passwordLink, 'and the demo business user\'s password link')

  const browser = await openBrowser(t)
  const rider = await browser.newContext({ baseURL: consoleUrl, viewport: PHONE, geolocation: { latitude: ISLAND.lat, longitude: ISLAND.lng, accuracy: 15 }, permissions: ['geolocation'] })
  const recipient = await browser.newContext({ viewport: PHONE })
  const owner = await browser.newContext({ baseURL: consoleUrl, viewport: { width: 1000, height: 900 } })
  t.teardown(async () => {
    for (const context of [rider, recipient, owner]) await context.close().catch(() => {})
  })
  const courier = await rider.newPage()
  const tracking = await recipient.newPage()
  const business = await owner.newPage()
  mkdirSync(shots, { recursive: true })
  // Phone-sized: the viewport, or the whole page where a form runs below it.
  const shot = (page: Page | Locator, name: string, fullPage = false) => capture(page, path.join(shots, `${name}.png`), fullPage ? { fullPage } : {})

  const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true })
  const flash = (page: Page) => page.locator('main p.flash').textContent()
  /** The tracking page reloaded until its heading reads `line`; the heading it last read. */
  async function trackingReads(line: string): Promise<string> {
    const seen = await waitForValue(async () => {
      await tracking.reload()
      return tracking.getByRole('heading', { level: 1 }).textContent()
    }, (heading) => heading === line, WAIT_MS, 500)
    return seen.value ?? ''
  }

  await t.test('the rider logs in with the phone and the one-time code', async (t) => {
    const first = await courier.goto('/courier')
    t.equal(first?.status(), 200)
    t.equal(new URL(courier.url()).pathname, '/courier/login', 'not logged in: the login page')
    await courier.getByLabel('Phone number').fill(phone!)
    await courier.getByLabel('One-time code').fill(code!)
    await shot(courier, 'courier-login')
    const home = await submit(courier, button(courier, 'Log in'))
    t.equal(home.status(), 200)
    t.equal(new URL(courier.url()).pathname, '/courier')
    t.equal(await courier.getByRole('heading', { level: 1 }).textContent(), 'Your shift')
    t.match(await courier.locator('header').textContent(), /Demo Rider/)
  })

  await t.test('going available shares the browser\'s position', async (t) => {
    await submit(courier, button(courier, 'Go available'))
    t.equal(await flash(courier), 'You are available: offers near you appear here.')
    t.equal(await courier.locator('#shift-status').textContent(), 'available')
    await courier.locator('#location-status', { hasText: 'Position shared at' }).waitFor({ timeout: WAIT_MS })
    await shot(courier, 'courier-available')
  })

  let orderId = ''
  let trackingUrl = ''
  await t.test('an order placed through the API is offered to the rider; the tracking page waits', async (t) => {
    const placed = await fetch(`${launched.baseUrl}/business/order`, {
      method: 'POST', headers: { authorization: `Bearer ${launched.apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'courier-app-browser' },
      body: JSON.stringify([shipment({ proof: { pin: true, photo: true }, pickup_address: '12 Marina Road, Lagos Island', recipient_name: 'Ngozi Eze' })]),
    })
    t.equal(placed.status, 201)
    orderId = (await placed.json()).orders[0].order_id
    const order = await (await fetch(`${launched.baseUrl}/business/orders/${orderId}`, { headers: { authorization: `Bearer ${launched.apiKey}` } })).json()
    trackingUrl = order.tracking_url
    t.match(trackingUrl, /^http:\/\/localhost:\d+\/t\/[A-Za-z0-9_-]{22}$/)
    await tracking.goto(trackingUrl)
    t.equal(await tracking.getByRole('heading', { level: 1 }).textContent(), 'Your order is waiting for a courier')

    // The page looks at its state every 5 s and reloads itself: no reload by hand.
    const offer = courier.locator('section.offer')
    await offer.waitFor({ timeout: WAIT_MS })
    t.match(await offer.textContent(), /12 Marina Road, Lagos Island/)
    t.match(await offer.textContent(), /Phone case, 2 kg/)
    t.notOk((await courier.content()).includes('Ngozi Eze'), 'the offer does not name the recipient')
    await shot(courier, 'courier-offer')
  })

  let pin = ''
  await t.test('the rider accepts; the tracking page shows the courier on the way and the PIN', async (t) => {
    await submit(courier, button(courier, 'Accept'))
    t.equal(await flash(courier), `Order ${orderId} is yours: go to the pickup.`)
    const card = courier.locator(`#order-${orderId}`)
    t.match(await card.textContent(), /Ngozi Eze/, 'the recipient, now that the order is the rider\'s')
    await shot(courier, 'courier-active-order')
    t.equal(await trackingReads('A courier is on the way to pick up your parcel'), 'A courier is on the way to pick up your parcel')
    pin = (await tracking.locator('.pin').textContent()) ?? ''
    t.match(pin, /^\d{4}$/, 'the recipient reads the PIN')
    t.match(await tracking.locator('main').textContent(), /Your courier: Demo, by motorbike/)
    await shot(tracking, 'tracking-assigned')
  })

  await t.test('picked up; the deliver form takes the PIN and a camera photo', async (t) => {
    await submit(courier, button(courier, 'Picked up'))
    t.equal(await flash(courier), `Picked up ${orderId}: now take it to the recipient.`)
    t.equal(await trackingReads('Your parcel is on its way'), 'Your parcel is on its way')
    await shot(tracking, 'tracking-picked-up')
    const photo = courier.locator('input[type=file][name=photo]')
    t.equal(await photo.getAttribute('capture'), 'environment')
    t.equal(await photo.getAttribute('accept'), 'image/*')
    await courier.getByLabel('PIN from the recipient').fill(pin)
    await photo.setInputFiles({ name: 'doorstep.png', mimeType: 'image/png', buffer: pngPhoto(320, 240) })
    await shot(courier, 'courier-deliver-form', true)
  })

  await t.test('delivered with the PIN and the photo; the tracking page ends at delivered', async (t) => {
    await submit(courier, button(courier, 'Deliver'))
    t.equal(await flash(courier), `Delivered ${orderId}. Well done.`)
    t.equal(await courier.locator('section.order').count(), 0, 'no order left to carry')
    await shot(courier, 'courier-delivered')
    t.equal(await trackingReads('Delivered'), 'Delivered')
    t.equal(await tracking.locator('.pin').count(), 0, 'the PIN is gone once delivered')
    await shot(tracking, 'tracking-delivered')
  })

  await t.test('the business\'s order page shows the proof: PIN verified, the photo, where and when', async (t) => {
    await business.goto(passwordLink!)
    await business.getByLabel('New password').fill(TEST_PASSWORD)
    await business.getByLabel('Repeat the password').fill(TEST_PASSWORD)
    await submit(business, button(business, 'Set password'))
    await business.getByLabel('Email', { exact: true }).fill('demo@example.com')
    await business.getByLabel('Password', { exact: true }).fill(TEST_PASSWORD)
    await submit(business, button(business, 'Log in'))
    const page = await business.goto(`/console/orders/${orderId}`)
    t.equal(page?.status(), 200)
    const proof = business.locator('#proof')
    t.match(await proof.textContent(), /PIN verified\s*Delivered \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s*Courier at 6\.45000, 3\.40000/)
    const image = proof.getByRole('img', { name: `Delivery photo of ${orderId}` })
    const width = await waitForValue(() => image.evaluate((element) => (element instanceof HTMLImageElement && element.complete ? element.naturalWidth : 0)), (value) => value > 0, WAIT_MS, 100)
    t.equal(width.value, 320, 'the photo the rider took, loaded from the console')
    t.equal(await business.locator('#tracking-link').getAttribute('href'), trackingUrl, 'and the tracking link')
    await shot(business.locator('.cards'), 'business-order-proof')
  })
})
