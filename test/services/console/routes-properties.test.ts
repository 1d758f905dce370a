import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { issueLoginCode } from '../../../shared/couriers/login.js'
import { seedAccount } from '../../helpers/accounts.js'
import { anyText } from '../../helpers/arbitraries.js'
import { ConsoleClient, consoleUser, startConsole, type ConsoleRoute } from '../../helpers/console.js'
import { createdCourier, freshPhone } from '../../helpers/courier-accounts.js'
import { onShift, pendingOffer, placeOrders } from '../../helpers/couriers.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

/*
 * Every route the console serves (the operator's pages, a business's pages, the courier web app,
 * the tracking page), each sent random requests by a signed-in user of the kind the route is for:
 * path ids real, of another business, or junk; query strings and form bodies from the field names
 * the console's own pages use (read from their forms), with values of any shape; the form token
 * right, stale or missing; the rate-card upload with any file. No answer may be a 5xx. Routes
 * that end a session (log out, disable the user) come last, so the rest run signed in.
 */

const RUNS = 40

const storage = mkdtempSync(path.join(tmpdir(), 'console-fuzz-photos-'))
t.teardown(() => rmSync(storage, { recursive: true, force: true }))
const stack = await startStack(t, { dispatcher: true, env: { DISPATCH_OFFER_S: '600' } })
const { sql } = stack.db
const { app, url, routes } = await startConsole(t, { ...stack.db.env, STORAGE_DIR: storage })
const account = await seedAccount(sql, { balance: 50_000, scopes: ['orders:write', 'webhooks:write'], sandbox: 50_000 })
const other = await seedAccount(sql, { balance: 50_000, name: 'Other Stores' })

// Objects behind the real ids: orders (one assigned to the courier, one offered), a webhook
// endpoint with an event, API keys, console users, couriers.
const phone = freshPhone()
const { courier } = await createdCourier(sql, { name: 'Console Fuzz Rider', phone })
const rider = await onShift(stack.gateway, sql, 'Fuzz Rider', ISLAND)
const [assigned] = await placeOrders(stack.gateway, account.apiKey, [shipment()])
const offer = await pendingOffer(sql, assigned)
if (!offer) throw new Error('no offer came')
const [othersOrder] = await placeOrders(stack.gateway, other.apiKey, [shipment()])
const [sandboxOrder] = await placeOrders(stack.gateway, account.testApiKey ?? '', [shipment()])
const endpoint = await stack.gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: bearer(account.apiKey), payload: { url: 'http://127.0.0.1:9/hooks' } })
if (endpoint.statusCode !== 201) throw new Error(`endpoint: ${endpoint.body}`)

const operatorUser = await consoleUser(sql, url, { email: 'ops@fuzz.example', role: 'operator' })
const businessUser = await consoleUser(sql, url, { email: 'owner@fuzz.example', role: 'business', businessId: account.businessId })
const operator = new ConsoleClient(app)
await operator.setPassword(operatorUser.link)
await operator.logIn(operatorUser)
const business = new ConsoleClient(app)
await business.setPassword(businessUser.link)
await business.logIn(businessUser)
const courierApp = new ConsoleClient(app)
await courierApp.get('/courier/login')
const { code } = await issueLoginCode(sql, courier.id, 15)
const login = await courierApp.post('/courier/login', { phone, code })
if (login.statusCode !== 303) throw new Error(`courier login: ${login.statusCode}`)
const anonymous = new ConsoleClient(app)

const column = async (query: Promise<{ value: string }[]>) => (await query).map((row) => row.value)
const ids = {
  orders: [assigned, othersOrder, sandboxOrder],
  businesses: [account.businessId, other.businessId],
  keys: await column(sql`select id::text as value from api_keys`),
  users: await column(sql`select id::text as value from console_users`),
  couriers: [courier.id, rider.id],
  endpoints: await column(sql`select id as value from webhook_endpoints`),
  events: await column(sql`select id as value from events limit 5`),
  offers: [offer.id],
  tracking: await column(sql`select tracking_token as value from orders where tracking_token is not null`),
}
const realIds = Object.values(ids).flat()

// Each log-out route has a user of its own, made after the ids above so no fuzzed operator request
// disables them: a form token is made for its user, so one whose session ended is refused at the
// door (security.test.ts), and the business user may be disabled by the operator's routes first.
const leavers = new Map<string, ConsoleClient>()
for (const route of routes.filter((candidate) => candidate.method === 'POST' && candidate.url.startsWith('/console/logout'))) {
  const user = await consoleUser(sql, url, { email: `leaver${leavers.size}@fuzz.example`, role: 'business', businessId: account.businessId })
  const client = new ConsoleClient(app)
  await client.setPassword(user.link)
  await client.logIn(user)
  leavers.set(route.url, client)
}

// The names of every field the console's pages hold, read from their forms as each user sees them.
const fieldNames = new Set<string>()
for (const [client, prefix] of [[operator, '/console/ops'], [business, '/console'], [courierApp, '/courier']] as const) {
  for (const route of routes.filter((route) => route.method === 'GET' && route.url.startsWith(prefix) && !route.url.includes(':'))) {
    const page = await client.get(route.url)
    for (const match of page.body.matchAll(/<(?:input|select|textarea)[^>]*\sname="([^"]+)"/g)) fieldNames.add(match[1])
  }
}
fieldNames.delete('_csrf')
const fields = [...fieldNames]

const value = anyText(['', '0', '-1', '1', '100', '1e308', 'NaN', 'true', 'on', 'live', 'test', 'available', 'assigned', 'picked_up', 'delivered', 'created', 'bike', 'truck', 'operator', 'business',
  'orders:write', 'http://localhost:9/hooks', 'http://127.0.0.1:9/x', '+2348031112222', 'a long enough password', ...realIds])
const form = fc.array(fc.tuple(fc.constantFrom(...fields), fc.oneof(value, fc.array(value, { minLength: 2, maxLength: 3 }))), { maxLength: 6 })
const paramValue = (name: string, routeUrl: string) => {
  const pool = name === 'token' ? ids.tracking
    : name === 'keyId' ? ids.keys
      : name === 'userId' ? ids.users
        : routeUrl.includes('/orders/') ? ids.orders
          : routeUrl.includes('/businesses/') ? ids.businesses
            : routeUrl.includes('/couriers/') ? ids.couriers
              : routeUrl.includes('/webhooks/') ? ids.endpoints
                : routeUrl.includes('/events/') ? ids.events
                  : routeUrl.includes('/offers/') ? ids.offers : realIds
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...pool) }, fc.constantFrom(...realIds), fc.string({ minLength: 1, maxLength: 40 }), fc.string({ minLength: 101, maxLength: 400 }))
}

/** Who sends a route's requests: the user it is for. */
function clientFor(route: ConsoleRoute): ConsoleClient {
  const leaver = route.method === 'POST' ? leavers.get(route.url) : undefined
  if (leaver) return leaver
  if (route.url.startsWith('/console/ops')) return operator
  if (route.url.startsWith('/console')) return business
  if (route.url.startsWith('/courier')) return courierApp
  return anonymous
}
// Sessions end last: the courier's own routes first (an operator may disable the courier), then
// the business's, then the operator's (who may disable the business's user), logouts at the end.
const stage = (route: ConsoleRoute) => (/logout/.test(route.url) ? 4 : route.url.startsWith('/console/ops') ? 2 : route.url.startsWith('/console') ? 1 : 0)
const fuzzed = routes
  .filter((route) => !route.url.includes('/assets/') && !route.url.endsWith('*'))
  .sort((a, b) => stage(a) - stage(b))

const passedTheDoor: string[] = []
for (const route of fuzzed) {
  const name = `${route.method} ${route.url}`
  t.test(`${name}: random requests never get a 5xx`, async (t) => {
    const client = clientFor(route)
    const params = route.url.match(/:\w+/g) ?? []
    const request = fc.record({
      params: fc.tuple(...params.map((param) => paramValue(param.slice(1), route.url))),
      query: form,
      body: form,
      csrf: fc.oneof({ weight: 4, arbitrary: fc.constant('right') }, fc.constantFrom('missing', 'wrong')),
      file: route.url === '/console/ops/rate-cards' ? fc.oneof(fc.constant(null), fc.jsonValue({ maxDepth: 4 }).map((json) => JSON.stringify(json)), fc.string({ maxLength: 2000 })) : fc.constant(null),
    })
    const seen = new Map<number | 'router', number>()
    await fc.assert(fc.asyncProperty(request, async ({ params: values, query, body, csrf, file }) => {
      let index = 0
      const target = route.url.replace(/:\w+/g, () => encodeURIComponent(values[index++]))
      const search = new URLSearchParams(query.flatMap(([key, item]) => [item].flat().map((one) => [key, one]))).toString()
      const withQuery = search ? `${target}?${search}` : target
      const token = csrf === 'right' ? client.csrf : csrf === 'wrong' ? 'x'.repeat(client.csrf.length || 10) : null
      const response = route.method === 'GET' ? await client.get(withQuery)
        : file !== null ? await client.postFile(target, { field: 'file', name: 'card.json', content: file }, token)
          : await client.post(withQuery, { ...Object.fromEntries(body.map(([key, item]) => [key, [item].flat()])), _csrf: token })
      // An id past the router's 100 characters is answered before any route (security.test.ts).
      const status = target.split('/').some((segment) => segment.length > 100) ? 'router' : response.statusCode
      seen.set(status, (seen.get(status) ?? 0) + 1)
      if (response.statusCode >= 500) throw new Error(`${response.statusCode} for ${route.method} ${withQuery} ${JSON.stringify(body).slice(0, 300)}: ${response.body.slice(0, 500)}`)
    }), { numRuns: RUNS })
    t.pass(`${RUNS} random requests: ${JSON.stringify(Object.fromEntries(seen))}`)
    // A refused form token (403) or an id past the router's length stops a request at the door.
    if ([...seen.keys()].some((status) => status !== 403 && status !== 'router')) passedTheDoor.push(name)
  })
}

t.test('requests got past the form token and the router on every route', async (t) => {
  t.same(fuzzed.map((route) => `${route.method} ${route.url}`).filter((name) => !passedTheDoor.includes(name)), [])
})
