import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { disableCourier } from '../../../shared/couriers/accounts.js'
import { insertOffer } from '../../../shared/db/offers.js'
import { newOfferId } from '../../../shared/ids.js'
import { seedAccount } from '../../helpers/accounts.js'
import { kmNorth, onShift, placeOrders, type TestCourier } from '../../helpers/couriers.js'
import { ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { createdCourier } from '../../helpers/courier-accounts.js'

// Every courier route (services/gateway/routes/courier.ts, openapi/courier-operations.ts) given
// bad bodies, bad ids, someone else's offer or order, or no courier token: each answers a 4xx
// with the spec's error body and a message that says what is wrong, never a 5xx. The gateway
// also checks each answer against the OpenAPI document, so an undocumented status fails here.
// AUTH_FAILURE_LIMIT=0: the many 401s below would otherwise turn into 429s.
const { db, gateway } = await startStack(t, { env: { AUTH_FAILURE_LIMIT: '0' } })
const account = await seedAccount(db.sql, { balance: 1_000_000 })

/** A courier holding one assigned order and one pending offer of another. */
async function withWork(name: string, km: number): Promise<TestCourier & { orderId: string; offerId: string; offeredOrderId: string }> {
  const courier = await onShift(gateway, db.sql, name, kmNorth(ISLAND, km))
  const [orderId, offeredOrderId] = await placeOrders(gateway, account.apiKey, [shipment(), shipment()])
  const first = await insertOffer(db.sql, { id: newOfferId(), orderId: orderId!, courierId: courier.id, offerS: 600 })
  const accepted = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${first!.id}/accept`, headers: courier.auth })
  if (accepted.statusCode !== 200) throw new Error(accepted.body)
  const pending = await insertOffer(db.sql, { id: newOfferId(), orderId: offeredOrderId!, courierId: courier.id, offerS: 600 })
  return { ...courier, orderId: orderId!, offerId: pending!.id, offeredOrderId: offeredOrderId! }
}
const mine = await withWork('Mine', 0.5)
const theirs = await withWork('Theirs', 1)

/** The spec's error body at `url`'s path, with this status and a message matching `message`. */
function refused(t: Test, response: LightMyRequestResponse, url: string, status: number, message: RegExp) {
  t.equal(response.statusCode, status, `${url}: ${response.body.slice(0, 300)}`)
  const body = response.json()
  t.match(body, { statusCode: status, timestamp: String, path: url.split('?')[0], message, request_id: String }, `${url}: the spec's error body`)
  t.ok(!Number.isNaN(Date.parse(body.timestamp)), 'timestamp is a time')
}

type Case = [label: string, method: 'GET' | 'POST', url: string, request: { payload?: unknown; body?: string; contentType?: string }, status: number, message: RegExp]

const order = (orderId: string, move: string) => `/v2/courier/orders/${orderId}/${move}`
const offer = (offerId: string, decision: string) => `/v2/courier/offers/${offerId}/${decision}`
const UNKNOWN_OFFER = 'off_0000000000000000'
const UNKNOWN_ORDER = 'ORD-0000000000'
const long = 'x'.repeat(256)
const MULTIPART_FIX = '--fix\r\nContent-Disposition: form-data; name="latitude"\r\n\r\n6.45\r\n--fix--\r\n'

const cases: Case[] = [
  ['shift: empty object', 'POST', '/v2/courier/shift', { payload: {} }, 400, /^status should not be empty$/],
  ['shift: no body', 'POST', '/v2/courier/shift', {}, 400, /^status should not be empty$/],
  ['shift: unknown status', 'POST', '/v2/courier/shift', { payload: { status: 'sleeping' } }, 400, /^status must be one of the following values: available, offline$/],
  ['shift: a number', 'POST', '/v2/courier/shift', { payload: { status: 1 } }, 400, /^status must be one of/],
  ['shift: an array body', 'POST', '/v2/courier/shift', { payload: [{ status: 'available' }] }, 400, /^body must be a JSON object$/],
  ['shift: a string body', 'POST', '/v2/courier/shift', { body: '"available"', contentType: 'application/json' }, 400, /^body must be a JSON object$/],
  ['shift: malformed JSON', 'POST', '/v2/courier/shift', { body: '{"status": ', contentType: 'application/json' }, 400, /^Malformed JSON in request body$/],
  ['shift: empty JSON body (no body)', 'POST', '/v2/courier/shift', { body: '', contentType: 'application/json' }, 400, /^status should not be empty$/],
  ['shift: not JSON', 'POST', '/v2/courier/shift', { body: 'status=available', contentType: 'application/x-www-form-urlencoded' }, 415, /^Content-Type must be application\/json$/],
  ['location: empty', 'POST', '/v2/courier/location', { payload: {} }, 400, /latitude should not be empty/],
  ['location: latitude out of range', 'POST', '/v2/courier/location', { payload: { latitude: 91, longitude: 3 } }, 400, /^latitude must not be greater than 90$/],
  ['location: longitude out of range', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: -181 } }, 400, /^longitude must not be less than -180$/],
  ['location: a string latitude', 'POST', '/v2/courier/location', { payload: { latitude: '6.45', longitude: 3.4 } }, 400, /^latitude must be a number$/],
  ['location: bad time', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: 'yesterday' } }, 400, /^at must be an ISO 8601 time$/],
  // Times `Date.parse` reads but that are no fix time: a bare number, a time without its offset,
  // and years PostgreSQL refuses (the trail point of a courier holding an order was a 500).
  ['location: a number as time', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: '1' } }, 400, /^at must be an ISO 8601 time$/],
  ['location: a time without offset', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: '2026-11-26T10:00:00' } }, 400, /^at must be an ISO 8601 time$/],
  ['location: year 0000', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: '0000-01-01T00:00:00Z' } }, 400, /^at must be within the last 24 hours$/],
  ['location: a six-digit year', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: '-000001-01-01T00:00:00Z' } }, 400, /^at must be an ISO 8601 time$/],
  ['location: two days old', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, at: new Date(Date.now() - 48 * 3600_000).toISOString() } }, 400, /^at must be within the last 24 hours$/],
  ['location: negative accuracy', 'POST', '/v2/courier/location', { payload: { latitude: 6, longitude: 3, accuracy_m: -1 } }, 400, /^accuracy_m must not be less than 0$/],
  ['location: null body', 'POST', '/v2/courier/location', { body: 'null', contentType: 'application/json' }, 400, /latitude|body must be a JSON object/],
  ['accept: not an offer id', 'POST', offer('nonsense', 'accept'), {}, 404, /^Offer nonsense was not found$/],
  ['accept: lower-case offer id', 'POST', offer('off_abcdefghijklmnop', 'accept'), {}, 404, /^Offer off_abcdefghijklmnop was not found$/],
  ['accept: a 300-character id', 'POST', offer(`off_${'A'.repeat(300)}`, 'accept'), {}, 404, /^Cannot POST \/v2\/courier\/offers\/off_A{300}\/accept$/],
  ['accept: broken percent-encoding', 'POST', offer('%zz', 'accept'), {}, 404, /^Cannot POST \/v2\/courier\/offers\/%zz\/accept$/],
  ['pickup: a 300-character id', 'POST', order(`ORD-${'A'.repeat(300)}`, 'pickup'), {}, 404, /^Cannot POST /],
  ['order: no id', 'GET', '/v2/courier/orders/', {}, 404, /^No order id was given: \/orders\/\{order_id\}$/],
  ['accept: unknown offer', 'POST', offer(UNKNOWN_OFFER, 'accept'), {}, 404, /^Offer off_0000000000000000 was not found$/],
  ["accept: another courier's offer", 'POST', offer(theirs.offerId, 'accept'), {}, 404, new RegExp(`^Offer ${theirs.offerId} was not found$`)],
  ['accept: malformed JSON', 'POST', offer(mine.offerId, 'accept'), { body: '{', contentType: 'application/json' }, 400, /^Malformed JSON in request body$/],
  ['accept: not JSON', 'POST', offer(mine.offerId, 'accept'), { body: 'yes', contentType: 'text/plain' }, 415, /^Content-Type must be application\/json$/],
  ['unassign: not JSON', 'POST', order(mine.orderId, 'unassign'), { body: 'reason=flat', contentType: 'application/x-www-form-urlencoded' }, 415, /^Content-Type must be application\/json$/],
  // Only `/deliver` reads multipart/form-data (a photo): anywhere else it is a body that is not JSON.
  ['location: multipart', 'POST', '/v2/courier/location', { body: MULTIPART_FIX, contentType: 'multipart/form-data; boundary=fix' }, 415, /^Content-Type must be application\/json$/],
  ['fail: multipart', 'POST', order(mine.orderId, 'fail'), { body: MULTIPART_FIX, contentType: 'multipart/form-data; boundary=fix' }, 415, /^Content-Type must be application\/json$/],
  ['deliver: a form', 'POST', order(mine.orderId, 'deliver'), { body: 'pin=1234', contentType: 'application/x-www-form-urlencoded' }, 415, /^Content-Type must be application\/json or multipart\/form-data$/],
  ['location: too large', 'POST', '/v2/courier/location', { body: JSON.stringify({ latitude: 6, longitude: 3, pad: 'x'.repeat(1_100_000) }), contentType: 'application/json' }, 413, /^Request body is larger than \d+ bytes$/],
  ['decline: a number reason', 'POST', offer(mine.offerId, 'decline'), { payload: { reason: 5 } }, 400, /^reason must be a string$/],
  ['decline: a long reason', 'POST', offer(mine.offerId, 'decline'), { payload: { reason: long } }, 400, /^reason must be shorter than or equal to 255 characters$/],
  ['decline: an array body', 'POST', offer(mine.offerId, 'decline'), { payload: [] }, 400, /^body must be a JSON object$/],
  ['decline: not an offer id', 'POST', offer('%20', 'decline'), { payload: {} }, 404, /was not found$/],
  ["decline: another courier's offer", 'POST', offer(theirs.offerId, 'decline'), { payload: {} }, 404, new RegExp(`^Offer ${theirs.offerId} was not found$`)],
  ['pickup: not an order id', 'POST', order('ORD-lower', 'pickup'), {}, 404, /^Order ORD-lower was not found$/],
  ['pickup: unknown order', 'POST', order(UNKNOWN_ORDER, 'pickup'), {}, 404, /^Order ORD-0000000000 was not found$/],
  ["pickup: another courier's order", 'POST', order(theirs.orderId, 'pickup'), {}, 404, new RegExp(`^Order ${theirs.orderId} was not found$`)],
  ['pickup: an order only offered', 'POST', order(mine.offeredOrderId, 'pickup'), {}, 404, new RegExp(`^Order ${mine.offeredOrderId} was not found$`)],
  ['pickup: malformed JSON', 'POST', order(mine.orderId, 'pickup'), { body: '[', contentType: 'application/json' }, 400, /^Malformed JSON in request body$/],
  ['pickup: an array body', 'POST', order(mine.orderId, 'pickup'), { payload: [1] }, 400, /^body must be a JSON object$/],
  ['return: a string body', 'POST', order(mine.orderId, 'return'), { body: '"back"', contentType: 'application/json' }, 400, /^body must be a JSON object$/],
  ['accept: an array body', 'POST', offer(mine.offerId, 'accept'), { payload: [] }, 400, /^body must be a JSON object$/],
  ['deliver: not picked up yet', 'POST', order(mine.orderId, 'deliver'), { payload: {} }, 409, new RegExp(mine.orderId)],
  ['deliver: a number PIN', 'POST', order(mine.orderId, 'deliver'), { payload: { pin: 1234 } }, 400, /^pin must be a string$/],
  ["deliver: another courier's order", 'POST', order(theirs.orderId, 'deliver'), { payload: {} }, 404, /was not found$/],
  ['fail: no reason', 'POST', order(mine.orderId, 'fail'), { payload: {} }, 400, /^reason should not be empty$/],
  ['fail: a blank reason', 'POST', order(mine.orderId, 'fail'), { payload: { reason: '   ' } }, 400, /^reason should not be empty$/],
  ['fail: not picked up yet', 'POST', order(mine.orderId, 'fail'), { payload: { reason: 'nobody home' } }, 409, new RegExp(mine.orderId)],
  ['fail: an array body', 'POST', order(mine.orderId, 'fail'), { payload: ['nobody home'] }, 400, /^body must be a JSON object$/],
  ['unassign: a long reason', 'POST', order(mine.orderId, 'unassign'), { payload: { reason: long } }, 400, /^reason must be shorter than or equal to 255 characters$/],
  ['unassign: no body', 'POST', order(mine.orderId, 'unassign'), {}, 400, /^reason should not be empty$/],
  ['unassign: a NUL in the reason', 'POST', order(mine.orderId, 'unassign'), { payload: { reason: 'flat\u0000 tyre' } }, 400, /^reason must not contain a NUL character or an unpaired surrogate$/],
  ["unassign: another courier's order", 'POST', order(theirs.orderId, 'unassign'), { payload: { reason: 'mine now' } }, 404, /was not found$/],
  ['return: not failed', 'POST', order(mine.orderId, 'return'), {}, 409, new RegExp(mine.orderId)],
  ['an unknown move', 'POST', order(mine.orderId, 'teleport'), {}, 404, /^Cannot POST /],
  ["read: another courier's order", 'GET', `/v2/courier/orders/${theirs.orderId}`, {}, 404, new RegExp(`^Order ${theirs.orderId} was not found$`)],
  ['read: an order only offered', 'GET', `/v2/courier/orders/${mine.offeredOrderId}`, {}, 404, new RegExp(`^Order ${mine.offeredOrderId} was not found$`)],
  ['read: not an order id', 'GET', '/v2/courier/orders/ORD-lower', {}, 404, /^Order ORD-lower was not found$/],
]

t.test('bad bodies, bad ids and what is not theirs: a 4xx with the error body, never a 5xx', async (t) => {
  const me = async () => (await gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: mine.auth })).json()
  const before = await me()
  for (const [label, method, url, request, status, message] of cases) {
    const headers: Record<string, string> = { ...mine.auth }
    if (request.contentType) headers['content-type'] = request.contentType
    const response = await gateway.inject({ method, url, headers, ...(request.body !== undefined ? { payload: request.body } : request.payload !== undefined ? { payload: request.payload as object } : {}) })
    t.test(label, async (t) => refused(t, response, url, status, message))
  }
  // None of the refusals moved anything: the order is still assigned to the courier, the offers pending.
  const [held] = await db.sql`select status, courier_id from orders where id = ${mine.orderId}`
  t.match(held, { status: 'assigned', courierId: mine.id })
  const pending = await db.sql`select id from dispatch_offers where status = 'pending' and id in ${db.sql([mine.offerId, theirs.offerId])}`
  t.equal(pending.length, 2, 'both pending offers stand')
  t.strictSame((await me()).location, before.location, 'no refused ping moved the last fix')
  t.equal((await db.sql`select count(*)::int as n from order_trail_points where order_id = ${mine.orderId}`)[0]!.n, 0, 'nor added a trail point')
})

t.test('no courier token, a business key, an unknown, malformed or revoked token: 401 on every route', async (t) => {
  const revoked = await createdCourier(db.sql, { name: 'Gone' })
  t.equal((await disableCourier(db.sql, 'test', revoked.courier.id)).kind, 'disabled')
  const routes: ['GET' | 'POST', string][] = [
    ['GET', '/v2/courier/me'], ['POST', '/v2/courier/shift'], ['POST', '/v2/courier/location'], ['GET', '/v2/courier/offers'], ['GET', '/v2/courier/stream'],
    ['GET', '/v2/courier/orders'], ['GET', `/v2/courier/orders/${mine.orderId}`],
    ['POST', offer(mine.offerId, 'accept')], ['POST', offer(mine.offerId, 'decline')],
    ...['pickup', 'deliver', 'fail', 'unassign', 'return'].map((move): ['POST', string] => ['POST', order(mine.orderId, move)]),
  ]
  const credentials: [string, Record<string, string>][] = [
    ['no Authorization', {}],
    ['a business API key', bearer(account.apiKey)],
    ['an unknown courier token', bearer(`cc_live_${'A'.repeat(32)}`)],
    ['a malformed token', bearer('cc_live_short')],
    ['a revoked token', bearer(revoked.token)],
    ['Basic credentials', { authorization: `Basic ${Buffer.from(`${mine.token}:`).toString('base64')}` }],
    ['a courier token without Bearer', { authorization: mine.token }],
  ]
  for (const [method, url] of routes) {
    for (const [label, headers] of credentials) {
      const response = await gateway.inject({ method, url, headers, ...(method === 'POST' ? { payload: { status: 'available', latitude: 6, longitude: 3, reason: 'x' } } : {}) })
      t.test(`${method} ${url} with ${label}`, async (t) => refused(t, response, url, 401, /^Invalid courier token$/))
    }
  }
  const [held] = await db.sql`select status from orders where id = ${mine.orderId}`
  t.equal(held!.status, 'assigned', 'nothing moved')
})
