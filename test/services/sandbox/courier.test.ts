import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { ORDER_STATUSES, type OrderStatus } from '../../../shared/courier.js'
import { SANDBOX_COURIER } from '../../../shared/orders/sandbox-courier.js'
import { seedAccount } from '../../helpers/accounts.js'
import { assertError, PLACE } from '../../helpers/gateway.js'
import { waitForValue } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { startReceiver, type Receipt } from '../../helpers/webhook-receiver.js'

/** The made-up courier as orders show it: outside the courier system, so no id, vehicle or position. */
const SHOWN_COURIER = { id: null, ...SANDBOX_COURIER, vehicle_type: null, location: null }

// DESIGN.md section 11 (the sandbox courier and the advance route), section 13 items 7 and 12:
// test orders move by themselves, one step every SANDBOX_STEP_S, along the path their
// `sandbox_scenario` picks; every move writes its event and fires webhooks as in live mode.

const STEP_S = 0.3
const MIN_GAP_MS = 0.9 * STEP_S * 1000
// A generous deadline (13.7): a path of at most five steps takes under two seconds here; a
// courier that does not move, or moves only on the sweep's schedule, misses it by far.
const WAIT_MS = 15_000
const ORDERS = '/v2/business/orders'
const EVENTS = '/v2/business/events'
const ENDPOINTS = '/v2/business/webhook-endpoints'
const advanceUrl = (orderId: string) => `/v2/business/sandbox/orders/${orderId}/advance`

type Resource = Record<string, any>
type History = { status: OrderStatus; at: string; reason?: string }[]

const PATHS = {
  deliver: ['created', 'assigned', 'picked_up', 'delivered'],
  fail: ['created', 'assigned', 'picked_up', 'failed', 'returned'],
  unassign: ['created', 'assigned', 'created', 'assigned', 'picked_up', 'delivered'],
} as const

/** The event a history step writes: a return to `created` is an unassignment. */
const eventOf = (previous: OrderStatus | undefined, status: OrderStatus) =>
  status === 'created' && previous !== undefined ? 'order.unassigned' : `order.${status}`

t.test('the sandbox courier', async (t) => {
  const receiver = await startReceiver(t)
  const { gateway, db } = await startStack(t, { webhookSender: true, env: { SANDBOX_STEP_S: String(STEP_S) } })
  const { sql } = db
  const redis = new Redis(db.config.REDIS_URL, { maxRetriesPerRequest: null })
  const sandboxQueue = new Queue('sandbox', { connection: redis, prefix: db.config.QUEUE_PREFIX })
  t.teardown(async () => {
    await sandboxQueue.close()
    redis.disconnect()
  })

  const account = (name: string) => seedAccount(sql, { balance: 100_000, sandbox: 100_000, scopes: ['orders:write', 'webhooks:write'], name })
  const call = (apiKey: string, method: 'GET' | 'POST', url: string, payload?: unknown) =>
    gateway.inject({ method, url, headers: bearer(apiKey), ...(payload !== undefined && { payload: payload as never }) })
  const place = async (t: Test, apiKey: string, shipments: unknown[]): Promise<string[]> => {
    const response = await call(apiKey, 'POST', PLACE, shipments)
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json().orders.map((order: Resource) => order.order_id)
  }
  const read = async (apiKey: string, orderId: string): Promise<Resource> => {
    const response = await call(apiKey, 'GET', `${ORDERS}/${orderId}`)
    if (response.statusCode !== 200) throw new Error(`GET ${orderId}: ${response.statusCode} ${response.body}`)
    return response.json()
  }
  /** Polls the order until `done` holds, within the deadline; asserts that it did. */
  const until = async (t: Test, apiKey: string, orderId: string, done: (order: Resource) => boolean, what: string): Promise<Resource> => {
    const waited = await waitForValue(() => read(apiKey, orderId), done, WAIT_MS, 20)
    t.ok(waited.held, `${orderId} ${what}: ${JSON.stringify(waited.value.history)}`)
    return waited.value
  }
  const advance = (apiKey: string, orderId: string, body: unknown) => call(apiKey, 'POST', advanceUrl(orderId), body)
  /** Every event of the caller's mode, in sequence order. */
  const allEvents = async (apiKey: string): Promise<Resource[]> => {
    const events: Resource[] = []
    for (let pages = 0; pages < 100; pages++) {
      const response = await call(apiKey, 'GET', `${EVENTS}?limit=100&after=${events.at(-1)?.sequence ?? 0}`)
      if (response.statusCode !== 200) throw new Error(response.body)
      events.push(...response.json().data)
      if (!response.json().has_more) break
    }
    return events
  }
  /** The statuses of a history. */
  const statuses = (history: History) => history.map((entry) => entry.status)
  /** Each gap between consecutive history entries (but those `skip` names) is at least 0.9 × SANDBOX_STEP_S (13.7). */
  const assertGaps = (t: Test, orderId: string, history: History, skip: (index: number) => boolean = () => false) => {
    for (let i = 1; i < history.length; i++) {
      if (skip(i)) continue
      const gap = Date.parse(history[i]!.at) - Date.parse(history[i - 1]!.at)
      t.ok(gap >= MIN_GAP_MS, `${orderId}: ${history[i - 1]!.status} → ${history[i]!.status} after ${gap} ms (at least ${MIN_GAP_MS} ms)`)
    }
  }
  /**
   * The events of one order, against its final history: one per move, in order, each with the
   * version and status of that move, at the move's time, livemode false.
   */
  const assertEventsFollow = (t: Test, events: Resource[], order: Resource) => {
    const own = events.filter((event) => event.data.order.order_id === order.order_id)
    const history: History = order.history
    t.same(own.map((event) => event.type), history.map((entry, i) => eventOf(history[i - 1]?.status, entry.status)), `${order.order_id}: one event per move, in order`)
    t.same(own.map((event) => event.data.order.version), history.map((_, i) => i + 1), `${order.order_id}: versions 1…${history.length}, consecutive`)
    t.same(own.map((event) => event.data.order.status), statuses(history), `${order.order_id}: each event carries the status of its move`)
    t.same(own.map((event) => event.created_at), history.map((entry) => entry.at), `${order.order_id}: each event is written at its move`)
    t.ok(own.every((event) => event.livemode === false && event.data.order.livemode === false), `${order.order_id}: every event is livemode false`)
    t.equal(order.version, history.length, `${order.order_id}: version = number of history entries`)
    return own
  }
  /** The business's sequences run 1…N without a gap. */
  const assertGapless = (t: Test, events: Resource[]) =>
    t.same(events.map((event) => event.sequence), events.map((_, i) => i + 1), `sequences 1…${events.length} without gaps`)

  const watcher = await account('Scenario Watch Ltd')
  const watched = await place(t, watcher.testApiKey!, [
    shipment(),
    shipment({ sandbox_scenario: 'fail' }),
    shipment({ sandbox_scenario: 'unassign' }),
    shipment({ sandbox_scenario: 'manual' }),
  ])
  const [deliverId, failId, unassignId, manualId] = watched as [string, string, string, string]

  t.test('each scenario takes its whole path, one step every SANDBOX_STEP_S', async (t) => {
    const delivered = await until(t, watcher.testApiKey!, deliverId, (order) => order.status === 'delivered', 'is delivered')
    const returned = await until(t, watcher.testApiKey!, failId, (order) => order.status === 'returned', 'is returned')
    const unassigned = await until(t, watcher.testApiKey!, unassignId, (order) => order.status === 'delivered', 'is delivered after its unassignment')

    t.same(statuses(delivered.history), PATHS.deliver, 'deliver: created → assigned → picked_up → delivered')
    t.same(statuses(returned.history), PATHS.fail, 'fail: created → assigned → picked_up → failed → returned')
    t.same(statuses(unassigned.history), PATHS.unassign, 'unassign: unassigned exactly once, then delivered')
    t.equal(delivered.sandbox_scenario, 'deliver', 'no scenario sent is deliver')
    t.equal(returned.sandbox_scenario, 'fail')
    t.equal(unassigned.sandbox_scenario, 'unassign')

    const failed = returned.history.find((entry: Resource) => entry.status === 'failed')
    t.match(failed, { reason: /\S/ }, 'the failure carries its reason')
    t.equal(returned.history.filter((entry: Resource) => entry.reason !== undefined).length, 1, 'only the failure has a reason')
    const withReason: Resource[] = unassigned.history.filter((entry: Resource) => entry.reason !== undefined)
    t.equal(withReason.length, 1, 'one unassignment, with its reason')
    t.match(withReason[0], { status: 'created', reason: /\S/ })

    for (const order of [delivered, returned, unassigned]) {
      assertGaps(t, order.order_id, order.history)
      t.equal(order.livemode, false)
      t.equal(order.refunded_amount, 0, 'failed and returned move no money')
    }
    t.strictSame(delivered.courier, SHOWN_COURIER, 'the made-up courier stays on the delivered order')
    t.match(SANDBOX_COURIER, { name: /\S/, phone: /^\+\d{10,15}$/ }, 'the made-up courier has a name and a phone')

    const events = await allEvents(watcher.testApiKey!)
    assertGapless(t, events)
    for (const order of [delivered, returned, unassigned]) {
      const own = assertEventsFollow(t, events, order)
      for (const event of own) {
        const courier = event.data.order.courier
        if (['order.assigned', 'order.picked_up', 'order.delivered'].includes(event.type)) t.strictSame(courier, SHOWN_COURIER, `${event.type}: the made-up courier`)
        if (['order.created', 'order.unassigned'].includes(event.type)) t.equal(courier, null, `${event.type}: no courier`)
      }
    }
    t.equal(events.filter((event) => event.type === 'order.unassigned').length, 1, 'one order.unassigned in all')
    const manual = await read(watcher.testApiKey!, manualId)
    t.match(manual, { status: 'created', version: 1, courier: null, sandbox_scenario: 'manual' }, 'manual stays created while the others run their paths')
    t.same(events.filter((event) => event.data.order.order_id === manualId).map((event) => event.type), ['order.created'])
    t.equal(events.length, 4 + 5 + 6 + 1, 'no other event was written')

    // Nothing is left in the queue for orders at rest.
    for (const order of [delivered, returned, unassigned]) {
      t.notOk(await sandboxQueue.getJob(`sandbox:${order.order_id}:${order.version}`), `${order.order_id}: no step queued after its last status`)
    }
  })

  t.test('POST /sandbox/orders/{id}/advance: each allowed step at once, refusals, a reason filled in', async (t) => {
    const owner = await account('Manual Steps Ltd')
    const key = owner.testApiKey!
    const [m1, m2, m3] = await place(t, key, [1, 2, 3].map(() => shipment({ sandbox_scenario: 'manual' }))) as [string, string, string]
    /** One advance that must succeed: the order it answers is the order as read right after. */
    const step = async (t: Test, orderId: string, body: Resource, expected: { status: OrderStatus; version: number }) => {
      const response = await advance(key, orderId, body)
      t.equal(response.statusCode, 200, `${orderId} → ${body.to}: ${response.body}`)
      const answer = response.json()
      t.match(answer, { order_id: orderId, livemode: false, ...expected })
      const { cancellation: _a, ...shown } = answer
      const { cancellation: _b, ...stored } = await read(key, orderId)
      t.strictSame(shown, stored, 'the answer is the order as stored')
      return answer as Resource
    }

    const assigned = await step(t, m1, { to: 'assigned' }, { status: 'assigned', version: 2 })
    t.strictSame(assigned.courier, SHOWN_COURIER, 'assignment brings the made-up courier')
    t.ok(assigned.cancellation.free_until !== null, 'the free window runs from the assignment')
    const unassigned = await step(t, m1, { to: 'created' }, { status: 'created', version: 3 })
    t.equal(unassigned.courier, null, 'unassigned: no courier')
    t.match(unassigned.history.at(-1), { status: 'created', reason: /\S/ }, 'a missing reason is filled in for an unassignment')
    await step(t, m1, { to: 'assigned' }, { status: 'assigned', version: 4 })
    await step(t, m1, { to: 'picked_up' }, { status: 'picked_up', version: 5 })
    const failed = await step(t, m1, { to: 'failed' }, { status: 'failed', version: 6 })
    t.match(failed.history.at(-1), { status: 'failed', reason: /\S/ }, 'a missing reason is filled in for a failure')
    await step(t, m1, { to: 'returned' }, { status: 'returned', version: 7 })

    await step(t, m2, { to: 'assigned' }, { status: 'assigned', version: 2 })
    const given = await step(t, m2, { to: 'created', reason: 'courier fell ill' }, { status: 'created', version: 3 })
    t.match(given.history.at(-1), { status: 'created', reason: 'courier fell ill' }, 'a reason sent is kept')
    await step(t, m2, { to: 'assigned' }, { status: 'assigned', version: 4 })
    await step(t, m2, { to: 'picked_up' }, { status: 'picked_up', version: 5 })
    const delivered = await step(t, m2, { to: 'delivered' }, { status: 'delivered', version: 6 })
    t.same(statuses(delivered.history), ['created', 'assigned', 'created', 'assigned', 'picked_up', 'delivered'])

    // Refusals: the state machine's 409, validation's 400, an unknown order's 404.
    const refused = async (orderId: string, to: string, from: string) =>
      assertError(t, await advance(key, orderId, { to }), { status: 409, path: advanceUrl(orderId), message: `cannot move ${orderId} from ${from} to ${to}` })
    await refused(m3, 'delivered', 'created')
    await refused(m3, 'picked_up', 'created')
    await refused(m3, 'created', 'created')
    await refused(m1, 'picked_up', 'returned')
    await refused(m2, 'failed', 'delivered')
    assertError(t, await advance(key, m3, { to: 'teleported' }), {
      status: 400, path: advanceUrl(m3), message: `to must be one of the following values: ${ORDER_STATUSES.filter((status) => status !== 'cancelled').join(', ')}`, errors: 'listed',
    })
    // Not a courier's move: the 400 says where a test order is cancelled.
    assertError(t, await advance(key, m3, { to: 'cancelled' }), {
      status: 400, path: advanceUrl(m3), message: 'to cannot be cancelled: cancel a test order with POST /v2/business/orders/{order_id}/cancel', errors: 'listed',
    })
    assertError(t, await advance(key, m3, {}), { status: 400, path: advanceUrl(m3), message: 'to should not be empty', errors: 'listed' })
    assertError(t, await advance(key, m3, { to: 'assigned', reason: 'x'.repeat(256) }), {
      status: 400, path: advanceUrl(m3), message: 'reason must be shorter than or equal to 255 characters', errors: 'listed',
    })
    const unknown = 'ORD-0000000000'
    assertError(t, await advance(key, unknown, { to: 'assigned' }), { status: 404, path: advanceUrl(unknown), message: `Order ${unknown} was not found` })
    const reader = await seedAccount(sql, { sandbox: 10, scopes: ['orders:read'], name: 'Read Only Sandbox Ltd' })
    assertError(t, await advance(reader.testApiKey!, m3, { to: 'assigned' }), { status: 403, path: advanceUrl(m3), message: 'Insufficient API key scope' })

    t.match(await read(key, m3), { status: 'created', version: 1 }, 'the refusals moved nothing')
    const events = await allEvents(key)
    assertGapless(t, events)
    assertEventsFollow(t, events, await read(key, m1))
    assertEventsFollow(t, events, await read(key, m2))
    t.same(events.filter((event) => event.data.order.order_id === m3).map((event) => event.type), ['order.created'], 'a refused move writes no event')
  })

  t.test('a manual advance on an automatic order: the courier goes on from there, repeating and skipping nothing', async (t) => {
    const owner = await account('Both Hands Ltd')
    const key = owner.testApiKey!

    /**
     * Moves the order by hand once it is in `from` (the courier may get there first, or move on
     * before the request lands: then a new order is tried). Returns the order and the move's version.
     */
    const handMove = async (t: Test, scenario: string, from: OrderStatus, to: OrderStatus, body: Resource = {}) => {
      for (let attempt = 1; attempt <= 5; attempt++) {
        const [orderId] = await place(t, key, [shipment({ sandbox_scenario: scenario })]) as [string]
        const reached = await until(t, key, orderId, (order) => order.status === from || order.version > 2, `reaches ${from}`)
        if (reached.status !== from) continue
        const response = await advance(key, orderId, { to, ...body })
        if (response.statusCode === 200) return { orderId, moved: response.json() as Resource }
        t.equal(response.statusCode, 409, `only the courier getting there first refuses it: ${response.body}`)
        t.comment(`attempt ${attempt}: the courier moved ${orderId} first; trying a new order`)
      }
      throw new Error(`could not move an order by hand from ${from} to ${to}`)
    }

    // deliver: moved to assigned by hand straight after placement.
    const first = await handMove(t, 'deliver', 'created', 'assigned')
    t.match(first.moved, { status: 'assigned', version: 2 })
    const done = await until(t, key, first.orderId, (order) => order.status === 'delivered', 'is delivered by the courier')
    t.same(statuses(done.history), PATHS.deliver, 'nothing repeated, nothing skipped')
    t.equal(done.history[1].at, first.moved.updated_at, 'the hand move is the assignment in the history')
    // The courier's own steps keep their pace from the hand move on.
    assertGaps(t, first.orderId, done.history, (i) => i === 1)

    // unassign: unassigned by hand after the courier's assignment; the courier does not unassign again.
    const second = await handMove(t, 'unassign', 'assigned', 'created')
    t.match(second.moved, { status: 'created', version: 3, courier: null })
    const after = await until(t, key, second.orderId, (order) => order.status === 'delivered', 'is delivered by the courier')
    t.same(statuses(after.history), PATHS.unassign, 'one unassignment (the hand one), then delivered')
    t.equal(after.history[2].at, second.moved.updated_at, 'the hand move is the unassignment in the history')
    t.equal(after.history[2].reason, second.moved.history[2].reason)
    assertGaps(t, second.orderId, after.history, (i) => i === 2)

    // fail: failed by hand at pick-up; the courier returns the parcel.
    const third = await handMove(t, 'deliver', 'picked_up', 'failed', { reason: 'address not found' })
    const back = await until(t, key, third.orderId, (order) => order.status === 'returned', 'is returned by the courier')
    t.same(statuses(back.history), ['created', 'assigned', 'picked_up', 'failed', 'returned'], 'the courier follows the hand move to returned')
    t.match(back.history[3], { status: 'failed', reason: 'address not found' })
    assertGaps(t, third.orderId, back.history, (i) => i === 3)

    const events = await allEvents(key)
    assertGapless(t, events)
    for (const order of [done, after, back]) assertEventsFollow(t, events, order)
  })

  t.test('webhooks fire for test orders as for live ones, to test endpoints only', async (t) => {
    const owner = await account('Hooked Sandbox Ltd')
    const create = async (apiKey: string, path: string) => {
      const response = await call(apiKey, 'POST', ENDPOINTS, { url: receiver.url(path) })
      t.equal(response.statusCode, 201, response.body)
      receiver.route(path, { secrets: [response.json().secret], respond: () => 204 })
      return response.json() as Resource
    }
    const testEndpoint = await create(owner.testApiKey!, '/sandbox/test')
    const liveEndpoint = await create(owner.apiKey, '/sandbox/live')
    t.equal(testEndpoint.livemode, false)

    const [testOrder, handOrder] = await place(t, owner.testApiKey!, [shipment(), shipment({ sandbox_scenario: 'manual' })]) as [string, string]
    const [liveOrder] = await place(t, owner.apiKey, [shipment({ sandbox_scenario: 'fail' })]) as [string]
    const handMove = await advance(owner.testApiKey!, handOrder, { to: 'assigned' })
    t.equal(handMove.statusCode, 200, handMove.body)
    await until(t, owner.testApiKey!, testOrder, (order) => order.status === 'delivered', 'is delivered')

    const testEvents = await allEvents(owner.testApiKey!)
    t.same(testEvents.map((event) => event.type).sort(), ['order.assigned', 'order.assigned', 'order.created', 'order.created', 'order.delivered', 'order.picked_up'])
    const liveEvents = await allEvents(owner.apiKey)
    t.same(liveEvents.map((event) => [event.type, event.data.order.order_id]), [['order.created', liveOrder]], 'the live order stays where it is: the courier moves test orders only')

    const got = await waitForValue(async () => receiver.at('/sandbox/test'), (receipts) => testEvents.every((event) => receipts.some((r) => r.id === event.id)), WAIT_MS, 20)
    t.ok(got.held, `every test event reached the test endpoint (${got.value.length} received)`)
    const gotLive = await waitForValue(async () => receiver.at('/sandbox/live'), (receipts) => receipts.some((r) => r.id === liveEvents[0]!.id), WAIT_MS, 20)
    t.ok(gotLive.held, 'the live event reached the live endpoint')

    const byId = new Map<string, Receipt>(got.value.map((receipt) => [receipt.id, receipt]))
    for (const event of testEvents) {
      const receipt = byId.get(event.id)
      if (!receipt) continue
      t.ok(receipt.verified, `${event.type} #${event.sequence}: standardwebhooks verifies it${receipt.problem ? ` (${receipt.problem})` : ''}`)
      t.ok(receipt.headersOk, `${event.type}: content-type and user-agent of section 9`)
      t.equal(receipt.body, JSON.stringify(event), `${event.type} #${event.sequence}: the body is the event as GET /events shows it`)
      t.equal(JSON.parse(receipt.body).livemode, false)
    }
    t.ok(got.value.every((receipt) => JSON.parse(receipt.body).livemode === false), 'the test endpoint got test events only')
    const testIds = new Set(testEvents.map((event) => event.id))
    t.notOk(receiver.at('/sandbox/live').some((receipt) => testIds.has(receipt.id)), 'the live endpoint got none of the test events')
    t.notOk(receiver.at('/sandbox/test').some((receipt) => receipt.id === liveEvents[0]!.id), 'the test endpoint got no live event')
    const crossed = await sql`select d.event_id from webhook_deliveries d join events e on e.id = d.event_id
      where (d.endpoint_id = ${liveEndpoint.id} and not e.livemode) or (d.endpoint_id = ${testEndpoint.id} and e.livemode)`
    t.same(crossed, [], 'no delivery was even queued across modes')
    // An attempt is logged once its answer is in, a moment after the receiver has the request.
    const logged = await waitForValue(async () => (await call(owner.testApiKey!, 'GET', `${ENDPOINTS}/${testEndpoint.id}/deliveries?limit=100`)).json().data as Resource[], (rows) => rows.length >= testEvents.length, WAIT_MS, 20)
    t.ok(logged.held && logged.value.every((row) => testIds.has(String(row.event_id))), 'the test endpoint\'s delivery log names test events only')
  })

  t.test('manual stays created once the sweep has had every chance to move it', async (t) => {
    // The sweep looks at orders idle for SANDBOX_STEP_S + 2 s; wait, by Postgres's clock, until
    // the manual order has been idle well past that, then past a few sweeps.
    const idle = await waitForValue(
      async () => (await sql`select updated_at < now() - interval '4 seconds' as idle from orders where id = ${manualId}`)[0]!.idle as boolean,
      (value) => value, WAIT_MS, 100)
    t.ok(idle.held, 'the manual order has been idle past the sweep\'s threshold')
    const manual = await read(watcher.testApiKey!, manualId)
    t.match(manual, { status: 'created', version: 1, courier: null }, 'still created, version 1')
    t.same(statuses(manual.history), ['created'])
    t.notOk(await sandboxQueue.getJob(`sandbox:${manualId}:1`), 'no step was ever queued for it')
    // The hand still moves it.
    const moved = await advance(watcher.testApiKey!, manualId, { to: 'assigned' })
    t.equal(moved.statusCode, 200, moved.body)
    t.match(moved.json(), { status: 'assigned', version: 2 })
  })
})
