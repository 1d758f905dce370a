import type { HTTPMethods } from 'fastify'
import fc from 'fast-check'
import t from 'tap'
import { API_KEY_SCOPES } from '../../../shared/db/api-keys.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift, pendingOffer, placeOrders } from '../../helpers/couriers.js'
import { nearly, someOf } from '../../helpers/arbitraries.js'
import { checkErrorBody } from '../../helpers/gateway.js'
import { pngPhoto } from '../../helpers/png.js'
import { ISLAND, quoteRequest, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

/*
 * "Bad input always gets the spec's error body, never a 5xx", on every operation the gateway
 * serves, not only the quote and the placement (gateway-properties.test.ts): fast-check builds
 * each request from the served document itself (its path parameters, its query parameters, the
 * property names of its request body) and fills them with values of any type, real ids of this
 * business and of another, ids of the right shape that name nothing, and junk. The stack's
 * response check (helpers/openapi-responses.ts) turns any answer the document does not describe,
 * by status or by body, into a 500, so "below 500" also means "as documented". Real objects sit
 * behind the real ids (live and sandbox orders, an assigned order, a pending offer, an event, a
 * webhook endpoint), so the generators reach the routes' own logic, not only their validation.
 */

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] }
type Parameter = { name: string; in: string; schema?: { pattern?: string } }
type Operation = { parameters?: Parameter[]; requestBody?: { content: Record<string, { schema: Schema; example?: unknown }> }; security?: Array<Record<string, unknown>>; responses: Record<string, unknown> }

const RUNS = 100
// No photo is stored in this file, so these can only refuse; the photo tests reach the rest.
const REFUSE_ONLY = ['GET /business/orders/{order_id}/proof/photo', 'GET /proof-photos/{key}/{expires}/{signature}']

const { gateway, db } = await startStack(t, { dispatcher: true, env: { DISPATCH_OFFER_S: '600' } })
const { sql } = db
const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
const account = await seedAccount(sql, { balance: 50_000, scopes: [...API_KEY_SCOPES], sandbox: 50_000 })
const other = await seedAccount(sql, { balance: 50_000, name: 'Other Stores' })
const key = bearer(account.apiKey)

// What the real ids name: an order assigned to the rider, one offered to a second rider, a
// sandbox order, another business's order, the placement, an event and a webhook endpoint.
const rider = await onShift(gateway, sql, 'Fuzz Rider', ISLAND)
const [assigned] = await placeOrders(gateway, account.apiKey, [shipment()])
const riderOffer = await pendingOffer(sql, assigned)
if (!riderOffer) throw new Error('no offer came for the first order')
const accepted = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${riderOffer.id}/accept`, headers: rider.auth })
if (accepted.statusCode !== 200) throw new Error(`accept: ${accepted.statusCode} ${accepted.body}`)
const second = await onShift(gateway, sql, 'Second Rider', ISLAND)
const [offered] = await placeOrders(gateway, account.apiKey, [shipment()])
const secondOffer = await pendingOffer(sql, offered)
if (!secondOffer || secondOffer.courierId !== second.id) throw new Error('the second order was not offered to the second rider')
const [sandboxOrder] = await placeOrders(gateway, account.testApiKey ?? '', [shipment()])
const [othersOrder] = await placeOrders(gateway, other.apiKey, [shipment()])
const [placement] = await sql<{ placementId: string }[]>`select placement_id from orders where id = ${assigned}`
const [event] = await sql<{ id: string }[]>`select id from events where order_id = ${assigned} limit 1`
const endpoint = await gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: key, payload: { url: 'http://127.0.0.1:9/hooks' } })
if (endpoint.statusCode !== 201) throw new Error(`endpoint: ${endpoint.statusCode} ${endpoint.body}`)
const endpointId: string = endpoint.json().id
// The ids each path parameter names, tried more often than the rest.
const idsFor: Record<string, string[]> = {
  order_id: [assigned, offered, sandboxOrder, othersOrder],
  placement_id: [placement.placementId],
  event_id: [event.id],
  id: [endpointId],
  offer_id: [riderOffer.id, secondOffer.id],
}
const realIds = Object.values(idsFor).flat()

const schemas = document.components.schemas as Record<string, Schema>
/** The property names a JSON body of this schema may carry, through references, unions and arrays. */
function propertyNames(schema: Schema | undefined, seen = new Set<string>()): string[] {
  if (!schema) return []
  if (schema.$ref) {
    const name = schema.$ref.split('/').pop() ?? ''
    if (seen.has(name)) return []
    seen.add(name)
    return propertyNames(schemas[name], seen)
  }
  const nested = [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? []), ...(schema.items ? [schema.items] : [])]
  return [...new Set([...Object.keys(schema.properties ?? {}), ...nested.flatMap((part) => propertyNames(part, seen))])]
}

// Values of every JSON type, and ones close to what the fields take.
const anyValue = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ minLength: 300, maxLength: 1200 }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom('available', 'offline', 'bike', 'car', 'van', 'truck', 'delivered', 'picked_up', 'assigned', 'failed', 'returned', 'created',
    'recipient_unavailable', 'too far', '0000', '1234', 'http://127.0.0.1:9/x', 'http://localhost:9/hooks', 'order.created', ...realIds),
  fc.jsonValue({ maxDepth: 2 }),
)
// Query values: whatever a URL can carry, repeated or empty.
const queryValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('', '0', '-1', '1', '100', '101', '1e3', '9007199254740993', 'NaN', 'created', 'debit', 'order.created', '2026-11-25T10:00:00Z', '2026-13-45', ...realIds),
  fc.integer().map(String),
)
type Body = { type: string; payload: Buffer | string }
// A photo delivery's form (the courier's deliver): parts of any name, type and bytes, a real PNG
// among them, and raw bytes that only claim to be a form (no boundary, a truncated one).
const part = fc.record({
  name: fc.oneof(fc.constantFrom('pin', 'photo'), fc.string({ maxLength: 12 })),
  filename: fc.option(fc.constantFrom('door.png', 'door.jpg', 'x', '../../etc/passwd'), { nil: undefined }),
  type: fc.option(fc.constantFrom('image/png', 'image/jpeg', 'text/plain', 'application/json', 'image/gif'), { nil: undefined }),
  content: fc.oneof(fc.string({ maxLength: 40 }).map((text) => Buffer.from(text)), fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)), fc.constant(pngPhoto(8, 8))),
})
const multipartBody = fc.oneof(
  fc.array(part, { maxLength: 4 }).map((parts): Body => {
    const boundary = 'fuzz-boundary-7c1e'
    const chunks = parts.flatMap((one) => [
      Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${one.name.replace(/["\r\n]/g, '')}"${one.filename ? `; filename="${one.filename}"` : ''}\r\n${one.type ? `content-type: ${one.type}\r\n` : ''}\r\n`),
      one.content, Buffer.from('\r\n'),
    ])
    return { type: `multipart/form-data; boundary=${boundary}`, payload: Buffer.concat([...chunks, Buffer.from(`--${boundary}--\r\n`)]) }
  }),
  fc.tuple(fc.constantFrom('multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=x'), fc.uint8Array({ maxLength: 512 }))
    .map(([type, bytes]): Body => ({ type, payload: Buffer.from(bytes) })),
)
const asQuery = (entries: [string, string | string[]][]) =>
  entries.flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((one) => `${encodeURIComponent(name)}=${encodeURIComponent(one)}`)).join('&')

// Reads first, then the courier's moves, then the business's changes (a cancel ends the courier's
// order), deletions last, so each operation still finds the objects it is about.
const stage = (method: string, path: string) => (method === 'GET' ? 0 : path.startsWith('/courier/') ? 1 : method === 'DELETE' ? 3 : 2)
const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
  .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase() as HTTPMethods, path, operation })))
  // The event stream answers 200 and stays open; its refusals have their own tests (dispatch/stream.test.ts).
  .filter(({ operation }) => !JSON.stringify(operation.responses).includes('text/event-stream'))
  .sort((a, b) => stage(a.method, a.path) - stage(b.method, b.path))
// Bodies to vary where the document's example is not one this account can use: a placement and a
// quote with coordinates inside the demo card's zones.
// The document's example endpoint names a host this machine cannot resolve (it has no internet):
// one it can, so an endpoint is made.
const SEEDS: Record<string, unknown> = {
  'POST /business/order': [shipment()], 'POST /business/order/cost': quoteRequest(),
  'POST /business/webhook-endpoints': { url: 'http://localhost:9/hooks', event_types: ['order.created', 'order.delivered'], description: 'Fuzzed' },
}
const statuses = new Map<string, Map<number, number>>()

for (const { method, path, operation } of operations) {
  const name = `${method} ${path}`
  t.test(`${name}: random requests get a documented answer, never a 5xx`, async (t) => {
    const security = operation.security ?? document.security
    const auth = security.some((requirement: object) => 'courierToken' in requirement) ? rider.auth
      : path.startsWith('/business/sandbox/') ? bearer(account.testApiKey ?? '') : security.length > 0 ? key : {}
    const pathParameters = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path')
    const queryNames = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name)
    const json = operation.requestBody?.content['application/json']
    const bodyFields = propertyNames(json?.schema)
    // The document's own example with a few fields replaced or dropped: most of these pass validation.
    const seed = SEEDS[name] ?? json?.example
    const example = (Array.isArray(seed) ? seed[0] : seed) as Record<string, unknown> | undefined
    const varied = example && nearly<unknown>(example, bodyFields, anyValue).map((result) => JSON.stringify(Array.isArray(seed) ? [result] : result))
    const seen = new Map<number, number>()
    statuses.set(name, seen)

    const pathValue = (parameter: Parameter) => fc.oneof(
      ...(idsFor[parameter.name] ? [{ weight: 4, arbitrary: fc.constantFrom(...(path.startsWith('/business/sandbox/') ? [sandboxOrder] : idsFor[parameter.name])) }] : []),
      fc.constantFrom(...realIds),
      ...(parameter.schema?.pattern ? [fc.stringMatching(new RegExp(parameter.schema.pattern))] : []),
      fc.string({ minLength: 1, maxLength: 40 }),
      fc.string({ minLength: 200, maxLength: 2000 }),
    )
    const jsonBody = fc.oneof(
      ...(varied ? [varied, varied] : []),
      fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
      someOf(bodyFields, () => anyValue).map((value) => JSON.stringify(value)),
      fc.array(someOf(bodyFields, () => anyValue), { maxLength: 3 }).map((value) => JSON.stringify(value)),
    ).map((payload): Body => ({ type: 'application/json', payload }))
    const body = fc.oneof(
      fc.constant(undefined),
      { weight: 4, arbitrary: jsonBody },
      ...(operation.requestBody?.content['multipart/form-data'] ? [{ weight: 2, arbitrary: multipartBody }] : []),
    )
    const request = fc.record({
      ids: fc.tuple(...pathParameters.map(pathValue)),
      query: fc.array(fc.tuple(queryNames.length > 0 ? fc.constantFrom(...queryNames) : fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(queryValue, fc.array(queryValue, { minLength: 2, maxLength: 3 }))), { maxLength: queryNames.length > 0 ? 4 : 1 }),
      body: ['GET', 'DELETE'].includes(method) ? fc.constant(undefined) : body,
      // A fresh key mostly; sometimes an empty, long or reused one (printable ASCII, as headers are).
      idempotencyKey: fc.oneof({ weight: 3, arbitrary: fc.uuid() }, fc.stringMatching(/^[\x20-\x7e]{0,300}$/), fc.constant('fuzz-reused')),
    })

    await fc.assert(fc.asyncProperty(request, async ({ ids, query, body, idempotencyKey }) => {
      let index = 0
      const urlPath = `/v2${path.replace(/\{\w+\}/g, () => encodeURIComponent(ids[index++] as string))}`
      const search = asQuery(query)
      const response = await gateway.inject({
        method,
        url: search ? `${urlPath}?${search}` : urlPath,
        headers: { ...auth, ...(body && { 'content-type': body.type }), 'idempotency-key': idempotencyKey },
        payload: body?.payload,
      })
      seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1)
      if (response.statusCode >= 500) throw new Error(`${response.statusCode} for ${method} ${urlPath}?${search} ${body?.payload.toString().slice(0, 300)}: ${response.body.slice(0, 500)}`)
      // As any HTTP client would send it: dot segments resolved.
      if (response.statusCode >= 400) checkErrorBody(response, new URL(urlPath, 'http://gateway').pathname)
    }), { numRuns: RUNS })
    t.pass(`${RUNS} random requests: ${JSON.stringify(Object.fromEntries(seen))}`)
  })
}

t.test('the requests reached past validation', async (t) => {
  const reached = (seen: Map<number, number>) => [...seen.keys()].some((status) => status !== 400 && status !== 404)
  // The courier's moves share one order: once one of them ends it (a delivery), the rest find no
  // order of the courier's (404), so they are counted together.
  const isMove = (name: string) => name.startsWith('POST /courier/orders/')
  const onlyRefused = [...statuses].filter(([name, seen]) => !isMove(name) && !reached(seen)).map(([name]) => name)
  t.same(onlyRefused, REFUSE_ONLY, 'every operation answered something besides 400 and 404, but the photo routes with no photo to show')
  t.ok([...statuses].some(([name, seen]) => isMove(name) && reached(seen)), 'the courier\'s moves reached the state machine')
})
