import t, { type Test } from 'tap'
import { Webhook } from 'standardwebhooks'
import type { Courier, OrderEventType, OrderStatus } from '../../../shared/courier.js'
import { newWebhookSecret } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { seedAccount, type SeededAccount } from '../../helpers/accounts.js'
import { walletsAgainstLedger } from '../../helpers/db.js'
import { ISO_UTC, PLACE } from '../../helpers/gateway.js'
import { waitForValue } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { startReceiver, verifyWith, type Answer, type Receipt } from '../../helpers/webhook-receiver.js'

// DESIGN.md section 9 (signing, delivery, retries, the delivery log, rotation, redelivery) and
// section 13 item 5, end to end: the gateway, the placement worker and the webhook sender of
// this file, and a real HTTP receiver that verifies every delivery with `standardwebhooks`.

const ENDPOINTS = '/v2/business/webhook-endpoints'
const COURIER: Courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: 'LSR-123-XY' }
// The retry schedule (5 s … 10 h, 8 attempts over ~32 h) shrunk to about a second in all.
const RETRY_SCALE = 0.00001
// Generous beside a local answer (milliseconds), short beside the 10 s default.
const TIMEOUT_MS = 1000
// A generous deadline that the broken behaviour (never, or minutes) misses by far.
const WAIT_MS = 20_000

type Resource = Record<string, any>

const signaturesOf = (receipt: Receipt): string[] => String(receipt.headers['webhook-signature']).split(' ')

t.test('signed webhooks, delivered to a real receiver', async (t) => {
  const receiver = await startReceiver(t)
  const { gateway, db } = await startStack(t, { webhookSender: true, env: { WEBHOOK_RETRY_SCALE: String(RETRY_SCALE), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } })
  const { sql } = db

  const business = (name: string) => seedAccount(sql, { balance: 100_000, scopes: ['orders:write', 'webhooks:write'], name })
  const call = (apiKey: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    gateway.inject({ method, url, headers: bearer(apiKey), ...(payload !== undefined && { payload: payload as never }) })

  /** An endpoint at `path` of the receiver, which answers as `respond` says and verifies with its secret. */
  const endpoint = async (t: Test, account: SeededAccount, path: string, respond: (receipt: Receipt, attempt: number) => Answer, eventTypes?: OrderEventType[]) => {
    const response = await call(account.apiKey, 'POST', ENDPOINTS, { url: receiver.url(path), ...(eventTypes && { event_types: eventTypes }) })
    t.equal(response.statusCode, 201, `endpoint ${path}: ${response.body}`)
    const created = response.json()
    const route = receiver.route(path, { secrets: [created.secret], respond })
    return { id: created.id as string, secret: created.secret as string, route }
  }
  const place = async (t: Test, account: SeededAccount, count = 1): Promise<string[]> => {
    const response = await call(account.apiKey, 'POST', PLACE, Array.from({ length: count }, () => shipment()))
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json().orders.map((order: { order_id: string }) => order.order_id)
  }
  const advance = async (t: Test, orderId: string, to: OrderStatus) => {
    const outcome = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? COURIER : null, reason: null })
    t.equal(outcome.kind, 'changed', `${orderId} → ${to}`)
  }
  const events = async (account: SeededAccount): Promise<{ id: string; type: OrderEventType; sequence: number }[]> =>
    (await sql`select id, type, sequence from events where business_id = ${account.businessId} order by sequence`) as never
  const lastEvent = async (account: SeededAccount) => (await events(account)).at(-1)!
  /** The whole delivery log of an endpoint, newest first, following next_cursor. */
  const log = async (account: SeededAccount, endpointId: string, limit = 100): Promise<Resource[]> => {
    const rows: Resource[] = []
    let cursor: string | null = null
    do {
      const url: string = `${ENDPOINTS}/${endpointId}/deliveries?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const response = await call(account.apiKey, 'GET', url)
      if (response.statusCode !== 200) throw new Error(`${url}: ${response.statusCode} ${response.body}`)
      const page = response.json()
      rows.push(...page.data)
      cursor = page.next_cursor
    } while (cursor !== null && rows.length < 1000)
    return rows
  }
  const logUntil = async (t: Test, account: SeededAccount, endpointId: string, done: (rows: Resource[]) => boolean, what: string) => {
    const waited = await waitForValue(() => log(account, endpointId), done, WAIT_MS, 50)
    t.ok(waited.held, `${what}: ${JSON.stringify(waited.value)}`)
    return waited.value
  }
  const receiptsUntil = async (t: Test, path: string, done: (receipts: Receipt[]) => boolean, what: string) => {
    const waited = await waitForValue(async () => receiver.at(path), done, WAIT_MS, 20)
    t.ok(waited.held, `${what} (${waited.value.length} received)`)
    return waited.value
  }
  const deliveryRows = async (endpointId: string) =>
    sql`select event_id, redelivery, status, attempts from webhook_deliveries where endpoint_id = ${endpointId} order by id`
  /** Every receipt verified with its route's secrets and carried section 9's headers. */
  const allSigned = (t: Test, receipts: Receipt[]) => {
    t.ok(receipts.length > 0, 'deliveries were received')
    for (const receipt of receipts) {
      t.ok(receipt.verified, `${receipt.path} ${receipt.id}: standardwebhooks verifies it${receipt.problem ? ` (${receipt.problem})` : ''}`)
      t.ok(receipt.headersOk, `${receipt.path} ${receipt.id}: content-type application/json, user-agent courier-webhooks/1 (${receipt.headers['content-type']}, ${receipt.headers['user-agent']})`)
    }
  }
  let captured: { receipt: Receipt; secret: string } | null = null

  t.test('every change of an order reaches the endpoint, as GET /events/{id} shows it; event_types filters', async (t) => {
    const account = await business('Every Change Ltd')
    const all = await endpoint(t, account, '/changes/all', () => 204)
    const filtered = await endpoint(t, account, '/changes/filtered', () => 200, ['order.delivered', 'order.cancelled'])

    const [delivered, cancelled] = await place(t, account, 2) as [string, string]
    await advance(t, delivered, 'assigned')
    await advance(t, delivered, 'picked_up')
    await advance(t, delivered, 'delivered')
    const cancel = await call(account.apiKey, 'POST', `/v2/business/orders/${cancelled}/cancel`)
    t.equal(cancel.statusCode, 200, cancel.body)

    const written = await events(account)
    t.same(written.map((event) => event.type), ['order.created', 'order.created', 'order.assigned', 'order.picked_up', 'order.delivered', 'order.cancelled'], 'six events were written')
    t.same(written.map((event) => event.sequence), [1, 2, 3, 4, 5, 6])
    const ids = written.map((event) => event.id)

    const received = await receiptsUntil(t, '/changes/all', (receipts) => ids.every((id) => receipts.some((r) => r.id === id)), 'every event reached the endpoint for all types')
    allSigned(t, received)
    for (const event of written) {
      const receipt = received.find((r) => r.id === event.id)!
      const read = await call(account.apiKey, 'GET', `/v2/business/events/${event.id}`)
      t.equal(read.statusCode, 200, read.body)
      t.strictSame(JSON.parse(receipt.body), read.json(), `${event.type} #${event.sequence}: the body is the event as GET /v2/business/events/${event.id} shows it`)
      t.equal(receipt.body, read.body, `${event.type} #${event.sequence}: byte for byte the text GET answers`)
      t.equal(receipt.headers['webhook-id'], event.id, 'webhook-id is the event id')
      t.match(receipt.headers['webhook-timestamp'], /^\d{10}$/, 'webhook-timestamp is Unix seconds')
      t.match(receipt.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/, 'one v1 signature (no rotation)')
    }
    t.same(new Set(received.map((r) => JSON.parse(r.body).sequence)), new Set([1, 2, 3, 4, 5, 6]), 'a receiver ordering by sequence has 1 to 6')

    const wanted = written.filter((event) => event.type === 'order.delivered' || event.type === 'order.cancelled').map((event) => event.id)
    const onlySome = await receiptsUntil(t, '/changes/filtered', (receipts) => wanted.every((id) => receipts.some((r) => r.id === id)), 'the filtered endpoint got order.delivered and order.cancelled')
    allSigned(t, onlySome)
    const relayed = await waitForValue(async () => (await sql`select count(*)::int as left from event_outbox o where o.business_id = ${account.businessId}`)[0]!.left, (left) => left === 0, WAIT_MS)
    t.ok(relayed.held, 'every event was relayed')
    t.same((await deliveryRows(filtered.id)).map((row) => row.eventId).sort(), [...wanted].sort(), 'the filtered endpoint has deliveries of its two types only')
    t.same(new Set(onlySome.map((r) => r.id)), new Set(wanted), 'and received nothing else')
    t.same((await deliveryRows(all.id)).map((row) => row.eventId).sort(), [...ids].sort(), 'the other endpoint has one delivery per event')

    const settled = await waitForValue(async () => [...await deliveryRows(all.id), ...await deliveryRows(filtered.id)], (rows) => rows.every((row) => row.status === 'succeeded'), WAIT_MS)
    t.ok(settled.held, 'every delivery succeeded')
    t.ok(settled.value.every((row) => row.attempts === 1), 'each at its first attempt')
    const logged = await logUntil(t, account, all.id, (rows) => rows.length === ids.length, 'the log has one attempt per event')
    t.same(new Set(logged.map((row) => row.event_id)), new Set(ids))
    for (const row of logged) {
      t.strictSame(Object.keys(row).sort(), ['at', 'attempt', 'duration_ms', 'error', 'event_id', 'event_type', 'next_attempt_at', 'response_status', 'status'])
      t.match(row, { attempt: 1, status: 'succeeded', response_status: 204, error: null, next_attempt_at: null, event_type: written.find((e) => e.id === row.event_id)!.type })
      t.ok(Number.isInteger(row.duration_ms) && row.duration_ms >= 0, 'duration_ms is a whole number of ms')
      t.match(row.at, ISO_UTC)
    }
    captured = { receipt: received[0]!, secret: all.secret }
  })

  t.test('the receiver really checks: a tampered body, a stale timestamp and a wrong secret are refused', async (t) => {
    t.ok(captured, 'a real delivery was captured')
    if (!captured) return
    const { receipt, secret } = captured
    const { headers, body } = receipt
    t.doesNotThrow(() => verifyWith(secret, body, headers), 'the delivery as received verifies')

    const tampered = body.replace('"sequence":', '"sequence":1')
    t.not(tampered, body)
    t.throws(() => verifyWith(secret, tampered, headers), { message: 'No matching signature found' }, 'a tampered body does not verify')
    t.throws(() => verifyWith(secret, `${body} `, headers), { message: 'No matching signature found' }, 'one byte more does not verify')
    t.throws(() => verifyWith(newWebhookSecret(), body, headers), { message: 'No matching signature found' }, 'another secret does not verify')
    t.throws(() => verifyWith(secret, body, { ...headers, 'webhook-id': 'evt_00000000000000000000' }), { message: 'No matching signature found' }, 'another webhook-id does not verify')
    t.throws(() => verifyWith(secret, body, { ...headers, 'webhook-signature': undefined }), { message: 'Missing required headers' })

    // The same body and id signed with the right secret at another time: only the timestamp differs.
    const signedAt = (offsetS: number) => {
      const at = new Date(Date.now() + offsetS * 1000)
      return { ...headers, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': new Webhook(secret).sign(receipt.id, at, body) }
    }
    t.doesNotThrow(() => verifyWith(secret, body, signedAt(-240)), 'signed 4 minutes ago: accepted')
    t.throws(() => verifyWith(secret, body, signedAt(-360)), { message: 'Message timestamp too old' }, 'signed 6 minutes ago: stale, refused')
    t.throws(() => verifyWith(secret, body, signedAt(360)), { message: 'Message timestamp too new' }, '6 minutes ahead: refused')
    const staleHeader = { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 301) }
    t.throws(() => verifyWith(secret, body, staleHeader), { message: 'Message timestamp too old' }, "the real delivery's timestamp moved back past 5 minutes: refused")
  })

  t.test('failing twice, then 204: three attempts of the same webhook-id, and a log of three', async (t) => {
    const account = await business('Flaky Receiver Ltd')
    const flaky = await endpoint(t, account, '/flaky', (_receipt, attempt) => (attempt <= 2 ? 500 : 204))
    await place(t, account)
    const event = await lastEvent(account)

    const received = await receiptsUntil(t, '/flaky', (receipts) => receipts.length >= 3, 'three attempts arrived')
    allSigned(t, received)
    t.same(received.map((r) => r.id), [event.id, event.id, event.id], 'the same webhook-id on every attempt')
    t.same(received.map((r) => r.answered), [500, 500, 204])
    t.same(new Set(received.map((r) => r.body)), new Set([received[0]!.body]), 'the same body on every attempt')

    const rows = await logUntil(t, account, flaky.id, (rows) => rows.length === 3, 'the log has three attempts')
    t.same(rows.map((row) => [row.attempt, row.status, row.response_status]), [[3, 'succeeded', 204], [2, 'retrying', 500], [1, 'retrying', 500]], 'newest first: retrying, retrying, succeeded')
    for (const row of rows) t.match(row, { event_id: event.id, event_type: 'order.created' })
    t.equal(rows[0]!.next_attempt_at, null, 'a success has no next attempt')
    t.equal(rows[0]!.error, null)
    for (const row of rows.slice(1)) {
      t.match(row.next_attempt_at, ISO_UTC, `attempt ${row.attempt}: next_attempt_at is set`)
      t.ok(Date.parse(row.next_attempt_at) >= Date.parse(row.at) - 1000, `attempt ${row.attempt}: the next attempt is after this one`)
      t.equal(row.error, 'the endpoint answered 500')
    }
    t.ok(Date.parse(rows[2]!.at) <= Date.parse(rows[1]!.at) && Date.parse(rows[1]!.at) <= Date.parse(rows[0]!.at), 'at rises with the attempt')
    t.strictSame((await deliveryRows(flaky.id)).map((row) => ({ ...row })), [{ eventId: event.id, redelivery: 0, status: 'succeeded', attempts: 3 }], 'one delivery, succeeded at its third attempt')

    // Paged: two, then the last one.
    const first = (await call(account.apiKey, 'GET', `${ENDPOINTS}/${flaky.id}/deliveries?limit=2`)).json()
    t.equal(first.data.length, 2)
    t.equal(first.has_more, true)
    t.type(first.next_cursor, 'string')
    const second = (await call(account.apiKey, 'GET', `${ENDPOINTS}/${flaky.id}/deliveries?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`)).json()
    t.strictSame(second, { data: [rows[2]], has_more: false, next_cursor: null }, 'the second page holds the first attempt')
    // The log pages by a row number every business's attempts share: its cursor never shows it.
    const [{ id: attemptId }] = await sql<{ id: number }[]>`select min(id)::int as id from webhook_attempts where endpoint_id = ${flaky.id}`
    t.throws(() => JSON.parse(Buffer.from(first.next_cursor, 'base64url').toString('utf8')), 'sealed: no JSON of the position to read')
    for (const forged of [Buffer.from(JSON.stringify({ id: attemptId + 1 })).toString('base64url'), `${first.next_cursor.slice(0, -2)}AA`]) {
      const refused = await call(account.apiKey, 'GET', `${ENDPOINTS}/${flaky.id}/deliveries?limit=2&cursor=${encodeURIComponent(forged)}`)
      t.equal(refused.statusCode, 400, 'a cursor it did not seal, or one altered, is refused')
      t.equal(refused.json().message, 'cursor is not valid')
    }
  })

  t.test('410 Gone disables the endpoint at once: no further deliveries', async (t) => {
    const account = await business('Gone Away Ltd')
    const gone = await endpoint(t, account, '/gone', () => 410)
    const witness = await endpoint(t, account, '/gone-witness', () => 204)
    const [orderId] = await place(t, account) as [string]
    const created = await lastEvent(account)

    const rows = await logUntil(t, account, gone.id, (rows) => rows.length >= 1, 'the 410 was logged')
    t.same(rows.map((row) => [row.attempt, row.status, row.response_status, row.next_attempt_at]), [[1, 'failed', 410, null]], 'one attempt, failed, no retry')
    t.equal(rows[0]!.event_id, created.id)
    const listed = (await call(account.apiKey, 'GET', ENDPOINTS)).json().data.find((item: Resource) => item.id === gone.id)
    t.match(listed, { status: 'disabled', disabled_reason: 'the endpoint answered 410 Gone' }, 'the endpoint shows as disabled')
    t.strictSame((await deliveryRows(gone.id)).map((row) => ({ ...row })), [{ eventId: created.id, redelivery: 0, status: 'failed', attempts: 1 }])

    await advance(t, orderId, 'assigned')
    const assigned = await lastEvent(account)
    await receiptsUntil(t, '/gone-witness', (receipts) => receipts.some((r) => r.id === assigned.id), 'the next event reached the enabled endpoint of the business')
    t.same(receiver.at('/gone').map((r) => r.id), [created.id], 'the disabled endpoint received nothing more')
    t.same((await deliveryRows(gone.id)).map((row) => row.eventId), [created.id], 'and no delivery was written for it')
    const redelivered = await call(account.apiKey, 'POST', `/v2/business/events/${assigned.id}/redeliver`)
    t.equal(redelivered.statusCode, 202, redelivered.body)
    t.same(redelivered.json().endpoint_ids, [witness.id], 'a redelivery skips the disabled endpoint')
    t.equal((await log(account, gone.id)).length, 1, 'its log still holds the one attempt')
  })

  t.test('a receiver that always fails: after the 8th attempt the delivery is failed', async (t) => {
    const account = await business('Always Down Ltd')
    const down = await endpoint(t, account, '/down', () => 503)
    await place(t, account)
    const event = await lastEvent(account)

    const rows = await logUntil(t, account, down.id, (rows) => rows.some((row) => row.status === 'failed'), 'the delivery ended failed')
    t.same(rows.map((row) => row.attempt), [8, 7, 6, 5, 4, 3, 2, 1], 'eight attempts, newest first')
    t.same(rows.map((row) => row.status), ['failed', 'retrying', 'retrying', 'retrying', 'retrying', 'retrying', 'retrying', 'retrying'])
    t.ok(rows.every((row) => row.response_status === 503 && row.error === 'the endpoint answered 503' && row.event_id === event.id), 'each answered 503')
    t.equal(rows[0]!.next_attempt_at, null, 'no attempt after the last')
    t.ok(rows.slice(1).every((row) => typeof row.next_attempt_at === 'string'), 'each earlier one named its next attempt')
    const received = receiver.at('/down')
    t.equal(received.length, 8, 'the receiver got eight requests')
    t.ok(received.every((r) => r.id === event.id), 'all with the same webhook-id')
    allSigned(t, received)
    t.strictSame((await deliveryRows(down.id)).map((row) => ({ ...row })), [{ eventId: event.id, redelivery: 0, status: 'failed', attempts: 8 }])
    const [state] = await sql`select status, consecutive_failures from webhook_endpoints where id = ${down.id}`
    t.strictSame({ ...state }, { status: 'enabled', consecutiveFailures: 1 }, 'one failed delivery counts, and does not disable the endpoint')
  })

  t.test('an event dropped by retention while its delivery retries fails the delivery, not the endpoint', async (t) => {
    const account = await business('Retention Ltd')
    const down = await endpoint(t, account, '/gone-event', () => 503)
    await place(t, account)
    const event = await lastEvent(account)
    await logUntil(t, account, down.id, (rows) => rows.length >= 1, 'the first attempt failed and the delivery retries')
    // As when its month's partition is dropped by EVENT_RETENTION_D.
    await sql`delete from events where id = ${event.id}`
    const settled = await waitForValue(() => deliveryRows(down.id), (rows) => rows.every((row) => row.status === 'failed'), WAIT_MS, 50)
    t.ok(settled.held, `the delivery ended failed instead of being queued again by every sweep: ${JSON.stringify(settled.value)}`)
    const sent = receiver.at('/gone-event').length
    const rows = await log(account, down.id)
    t.equal(rows.length, sent + 1, 'one row for each attempt sent, and one that ends the log')
    t.match(rows[0], { attempt: sent + 1, status: 'failed', response_status: null, error: 'the event is no longer kept (EVENT_RETENTION_D); nothing was sent', next_attempt_at: null, event_type: 'order.created' }, 'the last row says why nothing more comes')
    const [state] = await sql`select status, consecutive_failures from webhook_endpoints where id = ${down.id}`
    t.strictSame({ ...state }, { status: 'enabled', consecutiveFailures: 0 }, 'and the endpoint is not blamed for it')
  })

  const endpointState = async (endpointId: string): Promise<Resource> =>
    ({ ...(await sql`select status, disabled_reason, consecutive_failures, failing_since from webhook_endpoints where id = ${endpointId}`)[0] })
  /** The endpoint's status and failure streak, once `done` holds of them. */
  const endpointUntil = async (t: Test, endpointId: string, done: (state: Resource) => boolean, what: string) => {
    const waited = await waitForValue(() => endpointState(endpointId), done, WAIT_MS, 50)
    t.ok(waited.held, `${what}: ${JSON.stringify(waited.value)}`)
    return waited.value
  }

  t.test('10 failed deliveries in a row disable the endpoint only once it has been failing for 5 days (scaled)', async (t) => {
    const account = await business('Long Outage Ltd')
    const down = await endpoint(t, account, '/outage', () => 503)
    // Nine deliveries failed already, in a streak that began "now": an hour ahead, so it stays
    // younger than the scaled 5 days (4.3 s here) however long this machine takes to fail the next.
    await sql`update webhook_endpoints set consecutive_failures = 9, failing_since = now() + interval '1 hour' where id = ${down.id}`
    await place(t, account)
    const tenth = await endpointUntil(t, down.id, (state) => state.consecutiveFailures === 10, 'the tenth delivery failed')
    t.match(tenth, { status: 'enabled', disabledReason: null }, 'ten failed deliveries in a row within the span leave it enabled')

    // A minute is past the scaled 5 days and far short of real ones: only the sender's scale disables it.
    await sql`update webhook_endpoints set failing_since = now() - interval '1 minute' where id = ${down.id}`
    await place(t, account)
    const eleventh = await endpointUntil(t, down.id, (state) => state.consecutiveFailures === 11, 'the eleventh delivery failed')
    t.match(eleventh, { status: 'disabled', disabledReason: '10 deliveries in a row failed over 5 days' }, 'failing for the span, the next failed delivery disables it')
    const listed = (await call(account.apiKey, 'GET', ENDPOINTS)).json().data.find((item: Resource) => item.id === down.id)
    t.match(listed, { status: 'disabled', disabled_reason: '10 deliveries in a row failed over 5 days' }, 'the business sees why')
  })

  t.test('a success ends the failure streak: the failures before it no longer count toward disabling', async (t) => {
    const account = await business('Back Up Ltd')
    let down = false
    const recovering = await endpoint(t, account, '/recovering', (_receipt, attempt) => (down || attempt === 1 ? 503 : 204))
    // Nine failed deliveries over longer than the scaled span: one more failure would disable it.
    await sql`update webhook_endpoints set consecutive_failures = 9, failing_since = now() - interval '1 minute' where id = ${recovering.id}`
    await place(t, account)
    await endpointUntil(t, recovering.id, (state) => state.consecutiveFailures === 0, 'a retry succeeded')
    t.strictSame((await deliveryRows(recovering.id)).map((row) => [row.status, row.attempts]), [['succeeded', 2]], 'the delivery failed once, then succeeded')
    t.match(await endpointState(recovering.id), { status: 'enabled', failingSince: null }, 'the streak ended')

    down = true
    await place(t, account)
    const failed = await endpointUntil(t, recovering.id, (state) => state.consecutiveFailures === 1, 'the next delivery failed')
    t.match(failed, { status: 'enabled', disabledReason: null }, 'a failure after the success is the first of a new streak')
  })

  t.test('rotation: old and new secrets both sign for 24 h, then only the new one', async (t) => {
    const account = await business('Rotating Ltd')
    const rotating = await endpoint(t, account, '/rotate', () => 204)
    const [orderId] = await place(t, account) as [string]
    const before = await lastEvent(account)
    const [first] = await receiptsUntil(t, '/rotate', (receipts) => receipts.some((r) => r.id === before.id), 'delivered before the rotation')
    t.equal(signaturesOf(first!).length, 1, 'one signature before the rotation')
    await logUntil(t, account, rotating.id, (rows) => rows.length === 1, 'and logged')

    const response = await call(account.apiKey, 'POST', `${ENDPOINTS}/${rotating.id}/rotate-secret`)
    t.equal(response.statusCode, 200, response.body)
    const fresh = response.json().secret as string
    // Every delivery from now on must verify with each secret on its own.
    rotating.route.secrets = [rotating.secret, fresh]
    await advance(t, orderId, 'assigned')
    const during = await lastEvent(account)
    const overlap = (await receiptsUntil(t, '/rotate', (receipts) => receipts.some((r) => r.id === during.id), 'delivered after the rotation')).find((r) => r.id === during.id)!
    allSigned(t, [overlap])
    const signatures = signaturesOf(overlap)
    t.equal(signatures.length, 2, 'two signatures in the header')
    t.ok(signatures.every((signature) => /^v1,[A-Za-z0-9+/]{43}=$/.test(signature)), 'both v1')
    t.doesNotThrow(() => verifyWith(rotating.secret, overlap.body, overlap.headers), 'the old secret verifies')
    t.doesNotThrow(() => verifyWith(fresh, overlap.body, overlap.headers), 'the new secret verifies')
    t.throws(() => verifyWith(newWebhookSecret(), overlap.body, overlap.headers), { message: 'No matching signature found' }, 'a third does not')

    // The overlap over: one signature again, by the new secret only.
    await sql`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where id = ${rotating.id}`
    rotating.route.secrets = [fresh]
    await advance(t, orderId, 'picked_up')
    const after = await lastEvent(account)
    const expired = (await receiptsUntil(t, '/rotate', (receipts) => receipts.some((r) => r.id === after.id), 'delivered after the overlap')).find((r) => r.id === after.id)!
    allSigned(t, [expired])
    t.equal(signaturesOf(expired).length, 1, 'one signature after the overlap')
    t.throws(() => verifyWith(rotating.secret, expired.body, expired.headers), { message: 'No matching signature found' }, 'the old secret no longer verifies')
  })

  t.test('redeliver: 202, the event again with the same webhook-id, and in the log', async (t) => {
    const account = await business('Redeliver Ltd')
    const target = await endpoint(t, account, '/redeliver', () => 204)
    await place(t, account)
    const event = await lastEvent(account)
    await logUntil(t, account, target.id, (rows) => rows.length === 1 && rows[0]!.status === 'succeeded', 'delivered once')

    const url = `/v2/business/events/${event.id}/redeliver`
    const first = await call(account.apiKey, 'POST', url)
    t.equal(first.statusCode, 202, first.body)
    t.strictSame(first.json(), { event_id: event.id, endpoint_ids: [target.id] })
    const twice = await receiptsUntil(t, '/redeliver', (receipts) => receipts.length >= 2, 'the receiver got it again')
    t.same(twice.map((r) => r.id), [event.id, event.id], 'the same webhook-id')
    t.equal(twice[1]!.body, twice[0]!.body, 'the same body')
    allSigned(t, twice)

    const second = await call(account.apiKey, 'POST', url)
    t.equal(second.statusCode, 202, second.body)
    await receiptsUntil(t, '/redeliver', (receipts) => receipts.length >= 3, 'and a second redelivery too')
    const rows = await logUntil(t, account, target.id, (rows) => rows.length === 3, 'the log shows three deliveries')
    t.ok(rows.every((row) => row.event_id === event.id && row.status === 'succeeded' && row.attempt === 1 && row.response_status === 204), 'each succeeded at its first attempt')
    t.same((await deliveryRows(target.id)).map((row) => [row.redelivery, row.status]), [[0, 'succeeded'], [1, 'succeeded'], [2, 'succeeded']], 'deliveries 0, 1 and 2 (job ids …:0, …:1, …:2)')
    t.equal(receiver.at('/redeliver').length, 3, 'no more than asked for')
  })

  t.test(`a receiver that never answers: the attempt fails after WEBHOOK_TIMEOUT_MS (${TIMEOUT_MS}) with an error`, async (t) => {
    const account = await business('Silent Receiver Ltd')
    const silent = await endpoint(t, account, '/silent', () => 'hang')
    await place(t, account)
    const event = await lastEvent(account)
    const rows = await logUntil(t, account, silent.id, (rows) => rows.length >= 1, 'the first attempt was logged')
    const first = rows.at(-1)!
    t.match(first, { event_id: event.id, attempt: 1, status: 'retrying', response_status: null }, 'a failed attempt, to be retried, with no status')
    t.match(first.error, /time|abort/i, `its error says why: ${first.error}`)
    t.ok(first.duration_ms >= TIMEOUT_MS * 0.9, `it waited for the timeout (${first.duration_ms} ms)`)
    t.match(first.next_attempt_at, ISO_UTC)
    t.ok(receiver.at('/silent').length >= 1, 'the request did reach the receiver')
    const deleted = await call(account.apiKey, 'DELETE', `${ENDPOINTS}/${silent.id}`)
    t.equal(deleted.statusCode, 204, 'deleted, which ends its deliveries')
    // The sender's sweep (every 5 s) removes its retrying delivery and its log, then the endpoint.
    const rowsLeft = async () => (await sql`
      select (select count(*) from webhook_endpoints where id = ${silent.id}) + (select count(*) from webhook_deliveries where endpoint_id = ${silent.id})
        + (select count(*) from webhook_attempts where endpoint_id = ${silent.id}) as n`)[0]!.n
    const purged = await waitForValue(rowsLeft, (n) => Number(n) === 0, WAIT_MS, 100)
    t.ok(purged.held, `the sender removed the endpoint's rows (${purged.value} left)`)
  })

  t.test('a redirect is not followed and counts as a failure', async (t) => {
    const account = await business('Moved Ltd')
    const moved = await endpoint(t, account, '/moved', () => ({ status: 302, headers: { location: receiver.url('/moved-here') } }))
    receiver.route('/moved-here', { secrets: [moved.secret], respond: () => 204 })
    await place(t, account)
    const event = await lastEvent(account)

    const rows = await logUntil(t, account, moved.id, (rows) => rows.some((row) => row.status === 'failed'), 'every attempt failed')
    t.equal(rows.length, 8, 'eight attempts')
    t.ok(rows.every((row) => row.response_status === 302 && row.error === 'the endpoint answered 302' && row.event_id === event.id), 'each one a 302')
    t.equal(receiver.at('/moved').length, 8, 'each reached the endpoint')
    t.equal(receiver.at('/moved-here').length, 0, 'the Location was never requested')
  })

  t.test('balance = sum of the ledger', async (t) => {
    const wallets = await walletsAgainstLedger(sql)
    t.ok(wallets.length >= 8, 'the businesses of this file')
    for (const wallet of wallets) t.equal(wallet.balance, wallet.ledger, `${wallet.businessId}: balance ${wallet.balance} = ledger ${wallet.ledger}`)
  })
})

// A slow receiver keeps to its own few slots: with three sender slots and a cap of two per
// endpoint, another tenant's delivery goes through while the slow one holds its two.
t.test('one slow receiver never holds up another tenant: at most WEBHOOK_ENDPOINT_CONCURRENCY deliveries in flight per endpoint', async (t) => {
  const receiver = await startReceiver(t)
  const { gateway, db } = await startStack(t, { webhookSender: true, env: { WEBHOOK_RETRY_SCALE: String(RETRY_SCALE), WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_CONCURRENCY: '3', WEBHOOK_ENDPOINT_CONCURRENCY: '2' } })
  const call = (apiKey: string, url: string, payload: unknown) => gateway.inject({ method: 'POST', url, headers: bearer(apiKey), payload: payload as never })
  const tenant = async (name: string, path: string, respond: () => Answer) => {
    const account = await seedAccount(db.sql, { balance: 100_000, scopes: ['orders:write', 'webhooks:write'], name })
    const created = await call(account.apiKey, ENDPOINTS, { url: receiver.url(path), event_types: ['order.created'] })
    t.equal(created.statusCode, 201, created.body)
    receiver.route(path, { secrets: [created.json().secret], respond })
    return account
  }
  let holding = true
  const slow = await tenant('Slow Receiver Ltd', '/slow', () => (holding ? 'hang' : 204))
  const fast = await tenant('Fast Receiver Ltd', '/fast', () => 204)

  t.equal((await call(slow.apiKey, PLACE, Array.from({ length: 6 }, () => shipment()))).statusCode, 201)
  t.ok((await waitForValue(async () => receiver.at('/slow').length, (count) => count >= 2, WAIT_MS)).held, 'the slow receiver holds its first deliveries')
  t.equal((await call(fast.apiKey, PLACE, [shipment()])).statusCode, 201)
  const other = await waitForValue(async () => receiver.at('/fast').length, (count) => count >= 1, WAIT_MS)
  t.ok(other.held, 'the other tenant is delivered while the slow receiver still holds its own')
  t.equal(receiver.at('/slow').length, 2, 'the slow endpoint got only its two slots')

  holding = false
  receiver.dropHeld()
  const ids = (await db.sql<{ id: string }[]>`select id from events where business_id = ${slow.businessId}`).map((row) => row.id)
  const done = await waitForValue(async () => new Set(receiver.at('/slow').filter((receipt) => receipt.answered === 204).map((receipt) => receipt.id)), (answered) => ids.every((id) => answered.has(id)), WAIT_MS)
  t.ok(done.held, 'every delivery of the slow endpoint arrives once it answers again')
})
