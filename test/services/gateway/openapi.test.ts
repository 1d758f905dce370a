import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import t from 'tap'
import { loadConfig, gatewayEnv, webhookSenderEnv } from '../../../shared/config.js'
import { openApiDocument } from '../../../services/gateway/openapi/document.js'
import { STRICT_TRANSPORT_SECURITY } from '../../../services/gateway/server-options.js'
import { REFERENCE_MARK_SVG } from '../../../services/gateway/routes/openapi.js'
import { responseProblems } from '../../helpers/openapi-responses.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { seedAccount } from '../../helpers/accounts.js'

type Operation = { operationId: string; tags: string[]; description: string; responses: Record<string, unknown>; security?: unknown[] }

t.test('the document and its reference page are served without a key', async (t) => {
  const { gateway } = await startStack(t, { worker: false, env: { PUBLIC_BASE_URL: 'https://api.courier.example/' } })
  const response = await gateway.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  t.equal(document.openapi, '3.1.0')
  t.same(document.servers, [{ url: 'https://api.courier.example/v2', description: 'This deployment' }], 'an absolute server URL from PUBLIC_BASE_URL')
  t.equal(response.headers['strict-transport-security'], STRICT_TRANSPORT_SECURITY, 'an https deployment tells clients to stay on https (HSTS)')
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', payload: {} })).headers['strict-transport-security'], STRICT_TRANSPORT_SECURITY, 'on /v2 answers too, refused ones included')
  t.equal((await gateway.inject({ method: 'GET', url: `/v2/business/orders/ORD-${'A'.repeat(300)}` })).headers['strict-transport-security'], STRICT_TRANSPORT_SECURITY, 'and on a path the router cannot read, answered before any hook')

  const page = await gateway.inject({ method: 'GET', url: '/docs/' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-security-policy'], /upgrade-insecure-requests/, 'an https deployment has the browser fetch its assets over https')
  t.match(page.headers['content-type'], /text\/html/)
  t.match(page.body, /swagger-ui/i, 'Swagger UI renders the page')
  const initializer = await gateway.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
  t.equal(initializer.statusCode, 200, 'its assets come from the gateway itself, not a CDN')
  t.same((await gateway.inject({ method: 'GET', url: '/docs/json' })).json(), document, 'the page renders the served document')
})

t.test('the reference page carries the API name, no framework branding, no placeholder links, and opens on the walk-through', async (t) => {
  const { gateway } = await startStack(t, { worker: false, env: { PUBLIC_BASE_URL: 'https://api.courier.example' } })
  const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
  const page = (await gateway.inject({ method: 'GET', url: '/docs/' })).body
  t.match(page, /<title>Courier delivery ordering API: reference<\/title>/, 'the browser tab names the API')
  t.notMatch(page, /Swagger UI/, 'not "Swagger UI"')
  t.notMatch(page, /favicon-(16|32)x\d+\.png/, 'not the framework favicons')
  t.match(page, /rel="icon" type="image\/svg\+xml" href="\.\/static\/theme\/mark\.svg"/, 'the API mark as the tab icon')
  const mark = await gateway.inject({ method: 'GET', url: '/docs/static/theme/mark.svg' })
  t.equal(mark.statusCode, 200)
  t.equal(mark.body, REFERENCE_MARK_SVG)

  const initializer = (await gateway.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })).body
  t.match(initializer, /"layout":"BaseLayout"/, 'no top bar: the page opens on the document, title and walk-through first')
  const frameworkLogo = readFileSync(createRequire(import.meta.url).resolve('@fastify/swagger-ui/static/logo.svg'))
  t.notOk(initializer.includes(frameworkLogo.toString('base64').slice(0, 200)), 'the framework logo is not embedded')

  t.notOk(document.info.contact.url ?? document.info.contact.email, 'no placeholder support or website link')
  t.notOk(JSON.stringify(document.info).includes('support'), 'no "support" placeholder')
  t.match(document.info.description, /^Quote a local delivery[\s\S]*## From a quote to a delivered order, in the sandbox\n\n[\s\S]*1\. `GET \/business\/rate-cards`/, 'the description is the walk-through')
  t.same(document.servers.map((server: { url: string }) => server.url), ['https://api.courier.example/v2'], 'the server is the deployment')
})

t.test('without PUBLIC_BASE_URL the server is the local gateway; a bad one stops start-up', async (t) => {
  const { gateway } = await startStack(t, { worker: false })
  const local = await gateway.inject({ method: 'GET', url: '/openapi.json' })
  t.same(local.json().servers[0].url, 'http://localhost:3000/v2')
  // Over plain http (a LAN address, a staging host) an upgrade would fail every asset: a blank page.
  const page = await gateway.inject({ method: 'GET', url: '/docs/' })
  t.match(page.headers['content-security-policy'], /default-src 'self'/, 'the page keeps its policy')
  t.notMatch(page.headers['content-security-policy'], /upgrade-insecure-requests/, 'without moving its assets to https')
  t.notOk(local.headers['strict-transport-security'], 'no HSTS when the deployment is not https')
  t.throws(() => loadConfig(gatewayEnv, { PUBLIC_BASE_URL: 'ftp://example.com' }), /PUBLIC_BASE_URL: must be an http or https URL/)
})

t.test('every operation is served, named, tagged, described and answers 503, and 429 where a key is counted, in the error body', async (t) => {
  const { gateway } = await startStack(t, { worker: false })
  const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase(), url: `/v2${path.replace(/\{(\w+)\}/g, ':$1')}`, operation })))
  t.equal(operations.length, 34, "20 business operations (two of them the delivery photo and its link) and 14 courier ones")
  for (const { method, url, operation } of operations) {
    const name = `${method} ${url}`
    t.ok(gateway.hasRoute({ method, url }), `${name} is served`)
    t.match(operation.operationId, /^[a-z][A-Za-z]+$/, `${name} has an operationId`)
    t.ok(operation.tags.length === 1 && document.tags.some((tag: { name: string }) => tag.name === operation.tags[0]), `${name} has a declared tag`)
    t.match(operation.description, /API key scope: /, `${name} says which scope it takes`)
    t.ok(operation.responses['503'], `${name} declares 503`)
    // The rate limits count by API key or courier token; the signed photo link takes neither.
    const keyed = (operation.security ?? document.security).length > 0
    t.equal(Boolean(operation.responses['429']), keyed, `${name} declares 429 ${keyed ? 'as its key is counted' : 'never: it takes no key'}`)
  }
  t.same(new Set(operations.map(({ operation }) => operation.operationId)).size, operations.length, 'operationIds are unique')
  t.ok(document.webhooks.orderEvent.post.requestBody, 'the webhook POST to integrators is described too')
})

t.test('the request schemas say what the service refuses: every cross-field rule, nulls, blanks', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const { apiKey } = await seedAccount(db.sql)
  const base = { pickup_address: '12 Admiralty Way, Lekki', dropoff_address: '25 Adeola Odeku Street, VI', weight: 2 }
  const cases: Array<[string, Record<string, unknown>]> = [
    ['bike without option_id', { vehicle_type: 'bike' }],
    ['bike with option_id', { vehicle_type: 'bike', option_id: 'opt_X' }],
    ['bike with option_id null', { vehicle_type: 'bike', option_id: null }],
    ['truck without option_id', { vehicle_type: 'truck' }],
    ['truck with option_id null', { vehicle_type: 'truck', option_id: null }],
    ['option_id without vehicle_type', { option_id: 'opt_X' }],
    ['option_id with vehicle_type null', { option_id: 'opt_X', vehicle_type: null }],
    ['a latitude without its longitude', { pickup_latitude: 6.45 }],
    ['a longitude without its latitude', { dropoff_longitude: 3.4 }],
    ['both coordinates of one end', { pickup_latitude: 6.45, pickup_longitude: 3.4 }],
    ['a latitude with its longitude null', { pickup_latitude: 6.45, pickup_longitude: null }],
    ['every optional field null', { vehicle_type: null, option_id: null, pickup_state: null, dropoff_state: null, pickup_latitude: null, pickup_longitude: null, dropoff_latitude: null, dropoff_longitude: null }],
    ['a blank required string', { pickup_address: '     ' }],
    ['an empty required string', { dropoff_address: '' }],
  ]
  const { validate } = await import('@hyperjump/json-schema/openapi-3-1')
  const { documentUrl } = await import('../../helpers/openapi-responses.js')
  const quoteRequest = await validate(`${documentUrl}#/components/schemas/QuoteRequest`)
  for (const [name, fields] of cases) {
    const body = { ...base, ...fields }
    const fitsDocument = quoteRequest(body).valid
    const response = await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(apiKey), payload: body })
    // A body the service prices may still be refused for its rate card (an unknown option id): only a validation 400 counts.
    const validationRefusal = response.statusCode === 400 && Array.isArray(response.json().errors)
    t.equal(fitsDocument, !validationRefusal, `${name}: the document ${fitsDocument ? 'accepts' : 'refuses'} it, the service ${validationRefusal ? 'refuses' : 'accepts'} it`)
  }

  // A webhook endpoint's event types: the document refuses what the service does.
  const hooks = bearer((await seedAccount(db.sql, { scopes: ['webhooks:write'], name: 'Hooks' })).apiKey)
  const endpointRequest = await validate(`${documentUrl}#/components/schemas/WebhookEndpointRequest`)
  const eventTypeCases: Array<[string, string[]]> = [['known types', ['order.created']], ['an unknown type', ['order.lost']], ['a type twice', ['order.created', 'order.created']]]
  for (const [name, eventTypes] of eventTypeCases) {
    const body = { url: 'http://127.0.0.1:9/hooks', event_types: eventTypes }
    const fitsDocument = endpointRequest(body).valid
    const response = await gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: hooks, payload: body })
    t.equal(fitsDocument, response.statusCode === 201, `event_types ${name}: the document ${fitsDocument ? 'accepts' : 'refuses'} it, the service answers ${response.statusCode}`)
  }
})

t.test('the response check itself: a wrong body or an undocumented status is a problem', async (t) => {
  t.same(await responseProblems('GET', '/v2/business/wallet', 200, JSON.stringify({ balance: 10, currency: 'NGN', livemode: true, updated_at: '2026-11-23T09:41:07.512Z' })), [])
  t.match(await responseProblems('GET', '/v2/business/wallet', 200, JSON.stringify({ balance: '10', currency: 'NGN', livemode: true, updated_at: 'x' })), [/#\/balance fails/])
  t.match(await responseProblems('GET', '/v2/business/wallet', 200, JSON.stringify({ balance: 10, currency: 'NGN', livemode: true, updated_at: 'x', secret: 1 })), [/#\/secret fails/], 'an undocumented field')
  t.same(await responseProblems('GET', '/v2/business/wallet', 418, '{}'), ['status 418 is not documented for GET /business/wallet'])
  t.match(await responseProblems('GET', '/v2/business/orders/ORD-7K2M9QXH4T', 404, JSON.stringify({ statusCode: 404, timestamp: 'x', path: '/v2/x', message: 'm', request_id: 'r' })), [], 'a refusal by its named response')
  t.equal(await responseProblems('GET', '/health', 200, '{}'), null, 'a route outside the document is not checked')
})

t.test("the webhook's promise to receivers is the sender's own timeout", async (t) => {
  const timeoutMs = webhookSenderEnv.shape.WEBHOOK_TIMEOUT_MS.parse(undefined)
  const { description } = openApiDocument('https://api.courier.example').webhooks.orderEvent.post
  t.match(description, `answer 2xx within ${timeoutMs / 1000} seconds`, 'the default WEBHOOK_TIMEOUT_MS of the webhook sender')
  t.match(description, 'retried 7 times over about 28 hours', '5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h')
  t.match(description, '10 deliveries in a row that failed once the endpoint has been failing for 5 days', 'the rule that disables an endpoint, both of its conditions (DESIGN 9)')
})
