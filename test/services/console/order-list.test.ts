import t from 'tap'
import type { OrderStatus } from '../../../shared/courier.js'
import { useTestDb } from '../../helpers/db.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, seedOrder, startConsole } from '../../helpers/console.js'

/*
 * The console's orders list over HTTP, with the API's filters (DESIGN 8 and 12): several statuses
 * at once, date-time bounds (UTC, as the list shows times), a page size of 1 to 100, and a next
 * page that keeps every filter. A value the list cannot take is the form's 400, never a 500.
 */

const db = await useTestDb(t)
const { sql } = db
const { app, url } = await startConsole(t, db.env)
const shop = await seedAccount(sql, { name: 'Filter Goods' })
const other = await seedAccount(sql, { name: 'Other Goods' })
const operator = await consoleUser(sql, url, { email: 'ops@example.com', role: 'operator' })
const owner = await consoleUser(sql, url, { email: 'owner@filter.example', role: 'business', businessId: shop.businessId })
await new ConsoleClient(app).setPassword(operator.link)
await new ConsoleClient(app).setPassword(owner.link)

/** An order of the business, moved by hand to a status and a creation time: the list reads only those. */
async function orderAt(businessId: string, status: OrderStatus, at: string): Promise<string> {
  const id = await seedOrder(sql, businessId)
  await sql`update orders set status = ${status}, created_at = ${new Date(at)} where id = ${id}`
  return id
}

/** The order ids a list page shows, in its order. */
function listed(body: string): string[] {
  return [...body.matchAll(/<tr><td><a href="\/console\/(?:ops\/)?orders\/(ORD-[^"]+)">/g)].map((match) => match[1]!)
}

/** The next page's address, as a browser would follow it, or null on the last page. */
function nextLink(body: string): string | null {
  const found = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(body)
  return found ? found[1]!.replaceAll('&amp;', '&') : null
}

const day = '2030-03-10'
const byStatus = {
  created: await orderAt(shop.businessId, 'created', `${day}T08:00:00Z`),
  assigned: await orderAt(shop.businessId, 'assigned', `${day}T10:30:00Z`),
  picked_up: await orderAt(shop.businessId, 'picked_up', `${day}T14:00:00Z`),
  delivered: await orderAt(shop.businessId, 'delivered', `${day}T20:00:00Z`),
}
const business = new ConsoleClient(app)
await business.logIn(owner)
const ops = new ConsoleClient(app)
await ops.logIn(operator)

t.test('two statuses at once list exactly the orders in either, ticked again on the form', async (t) => {
  for (const query of ['status=assigned&status=picked_up', 'status=assigned,picked_up', 'status=picked_up,%20assigned&status=assigned']) {
    const page = await business.get(`/console/orders?${query}`)
    t.equal(page.statusCode, 200, query)
    t.same(listed(page.body), [byStatus.picked_up, byStatus.assigned], `${query}: newest first, nothing else`)
    t.match(page.body, /<input type="checkbox" id="field-status-assigned" name="status" value="assigned" checked>/)
    t.match(page.body, /<input type="checkbox" id="field-status-picked_up" name="status" value="picked_up" checked>/)
    t.match(page.body, /<input type="checkbox" id="field-status-created" name="status" value="created">/)
  }
  const overviewLink = await business.get('/console/orders?status=created')
  t.same(listed(overviewLink.body), [byStatus.created], "the overview's one-status link still works")
  const any = await business.get('/console/orders?status=')
  t.same(listed(any.body), [byStatus.delivered, byStatus.picked_up, byStatus.assigned, byStatus.created], 'a blank status (an old link) is any status')
})

t.test('a date-time bound cuts within a day, read as UTC like the times the list shows', async (t) => {
  const hour = await business.get(`/console/orders?created_gte=${day}T10:00&created_lt=${day}T12:00`)
  t.equal(hour.statusCode, 200)
  t.same(listed(hour.body), [byStatus.assigned], 'only the order of 10:30 UTC')
  t.match(hour.body, `<input id="field-created_gte" name="created_gte" type="datetime-local" value="${day}T10:00" step="any">`, 'the form keeps the bound')
  t.match(hour.body, /UTC/)
  const zoned = await business.get(`/console/orders?created_gte=${day}T11:00:00%2B01:00&created_lt=${day}T13:00:00%2B01:00`)
  t.same(listed(zoned.body), [byStatus.assigned], 'an ISO date-time with its offset, as the API takes it')
  t.match(zoned.body, `value="${day}T10:00"`, 'shown again in UTC')
  const dates = await business.get(`/console/orders?created_gte=${day}&created_lt=2030-03-11`)
  t.same(listed(dates.body), [byStatus.delivered, byStatus.picked_up, byStatus.assigned, byStatus.created], 'a plain date is midnight UTC, as old links have it')
  const afternoon = await business.get(`/console/orders?created_gte=${day}T14:00&status=picked_up&status=delivered&created_lt=${day}T20:00`)
  t.same(listed(afternoon.body), [byStatus.picked_up], 'the lower bound takes its own instant, the upper one leaves it out')
})

t.test('limit=50 pages of 50 across businesses, and the next link keeps every filter', async (t) => {
  const many: string[] = []
  for (let i = 0; i < 60; i++) many.push(await orderAt(other.businessId, i % 2 ? 'assigned' : 'picked_up', `2030-04-01T10:${String(i).padStart(2, '0')}:00Z`))
  await orderAt(other.businessId, 'delivered', '2030-04-01T10:30:30Z')
  const newestFirst = many.reverse()
  const first = await ops.get(`/console/ops/orders?business=${other.businessId}&status=assigned&status=picked_up&created_gte=2030-04-01&limit=50`)
  t.equal(first.statusCode, 200)
  t.same(listed(first.body), newestFirst.slice(0, 50), 'fifty, newest first')
  t.match(first.body, /<select id="field-limit" name="limit">.*<option value="50" selected>50<\/option>/s, 'the page size is chosen again')
  const next = nextLink(first.body)
  t.ok(next, 'a next page')
  const params = new URL(next ?? '', url).searchParams
  t.same(params.getAll('status'), ['assigned', 'picked_up'], 'each status kept')
  t.equal(params.get('limit'), '50')
  t.equal(params.get('business'), other.businessId)
  t.equal(params.get('created_gte'), '2030-04-01T00:00')
  const second = await ops.get(next ?? '')
  t.same(listed(second.body), newestFirst.slice(50), 'the last ten, the delivered order still left out')
  t.equal(nextLink(second.body), null, 'no page after the last')
  const byDefault = await ops.get(`/console/ops/orders?business=${other.businessId}`)
  t.equal(listed(byDefault.body).length, 25, 'the default page is 25')
  t.equal(listed((await ops.get(`/console/ops/orders?business=${other.businessId}&limit=7`)).body).length, 7, 'any size from 1 to 100')
})

t.test('a status, date or page size the list cannot take is the form\'s refusal, a 400 naming it', async (t) => {
  const refusals: [string, RegExp][] = [
    ['status=lost', /status must be one of created, assigned/],
    ['status=assigned&status=lost', /status must be one of/],
    ['status=assigned,lost', /status must be one of/],
    ['created_gte=garbage', /created_gte must be an ISO 8601 date-time/],
    ['created_lt=2030-13-01T10:00', /created_lt must be an ISO 8601 date-time/],
    ['created_lt=0000-01-01T10:00', /created_lt must be between 0001-01-01 and 9999-12-31/],
    ['limit=0', /limit must be an integer from 1 to 100/],
    ['limit=101', /limit must be an integer from 1 to 100/],
    ['limit=ten', /limit must be an integer from 1 to 100/],
    ['limit=25&limit=50', /limit/],
  ]
  for (const [query, message] of refusals) {
    for (const [who, client, path] of [['business', business, '/console/orders'], ['operator', ops, '/console/ops/orders']] as const) {
      const page = await client.get(`${path}?${query}`)
      t.equal(page.statusCode, 400, `${who}: ${query}`)
      t.match(page.body, /<p role="alert">The form could not be taken: /, `${who}: ${query} is the form's refusal`)
      t.match(page.body, message, `${who}: ${query} says why`)
    }
  }
})
