import t, { type Test } from 'tap'
import { createApiKey } from '../../../shared/accounts/api-keys.js'
import type { Courier, OrderStatus } from '../../../shared/courier.js'
import { changeOrder, type OrderChangeOutcome } from '../../../shared/orders/change.js'
import { changePlatformRates } from '../../../shared/pricing/platform-rates.js'
import { accountSeeder, demoCardFile } from '../../helpers/accounts.js'
import { assertError, expectedKm, ISO_UTC, PLACE, QUOTE, quoteBody } from '../../helpers/gateway.js'
import { IKEJA, ISLAND, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { assertLedgersOf } from '../../helpers/db.js'

// DESIGN.md section 8 (orders and their lifecycle) and section 13 items 2, 3, 6, 10 and 11,
// through the gateway's HTTP interface. Dispatch moves are the operator's path: changeOrder
// with no scope, as `order:advance` runs it.

const ORDERS = '/v2/business/orders'
const ORDER_ID = /^ORD-[0-9A-HJKMNP-TV-Z]{10}$/
const COURIER: Courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: 'LSR-123-XY' }
/** An operator's free-text courier as the resource shows it: outside the system, so no id, vehicle or position. */
const SHOWN_COURIER = { id: null, ...COURIER, vehicle_type: null, location: null }
const WINDOW_S = 120

type Placed = { placement_id: string; charged_total: number; orders: { order_id: string; price: number }[] }
// The API's JSON, read field by field as the tests need it.
type Resource = Record<string, any>

const plusSeconds = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString()

/** The demo card with the Island → Ikeja bike price changed, under a name of its own. */
function cardWithIslandIkejaBikePrice(price: number, name: string) {
  const file = { ...demoCardFile(), name }
  const band = file.options.find((option: { label: string }) => option.label === 'Up to 5 kg')
  band.prices.find((entry: { from: string; to: string }) => entry.from === 'Island' && entry.to === 'Ikeja').price = price
  return file
}

t.test('orders through the gateway', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const { account, businesses } = accountSeeder(sql)

  const place = async (t: Test, apiKey: string, shipments: unknown[]): Promise<Placed> => {
    const response = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(apiKey), payload: shipments as never })
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json()
  }
  const get = (apiKey: string, url: string) => gateway.inject({ method: 'GET', url, headers: bearer(apiKey) })
  const getOrder = async (t: Test, apiKey: string, orderId: string): Promise<Resource> => {
    const response = await get(apiKey, `${ORDERS}/${orderId}`)
    t.equal(response.statusCode, 200, `read ${orderId}: ${response.body}`)
    return response.json()
  }
  const list = async (t: Test, apiKey: string, query = ''): Promise<{ data: Resource[]; has_more: boolean; next_cursor: string | null }> => {
    const response = await get(apiKey, `${ORDERS}${query ? `?${query}` : ''}`)
    t.equal(response.statusCode, 200, `list ?${query}: ${response.body}`)
    return response.json()
  }
  const cancel = (apiKey: string, orderId: string, payload?: unknown, headers: Record<string, string> = {}) =>
    gateway.inject({ method: 'POST', url: `${ORDERS}/${orderId}/cancel`, headers: { ...bearer(apiKey), ...headers }, ...(payload !== undefined && { payload: payload as never }) })
  const advance = (orderId: string, to: OrderStatus, reason: string | null = null): Promise<OrderChangeOutcome> =>
    changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? COURIER : null, reason })
  /** Walks an order along dispatch moves, each of which must succeed; returns the order after the last. */
  const walk = async (t: Test, orderId: string, steps: [OrderStatus, string?][]): Promise<Resource> => {
    let order: Resource = {}
    for (const [to, reason] of steps) {
      const outcome = await advance(orderId, to, reason ?? null)
      t.equal(outcome.kind, 'changed', `${orderId} → ${to}: ${JSON.stringify(outcome)}`)
      if (outcome.kind === 'changed') order = outcome.order
    }
    return order
  }
  const balanceOf = async (businessId: string): Promise<number> => (await sql`select balance from wallets where business_id = ${businessId}`)[0]!.balance
  const refundsOf = async (orderId: string) => sql<{ id: number; amount: number; businessId: string; balanceAfter: number }[]>`
    select id, amount, business_id, balance_after from ledger_entries where order_id = ${orderId} and kind = 'refund'`
  const eventsOf = async (orderId: string) => sql<{ type: string; orderVersion: number }[]>`select type, order_version from events where order_id = ${orderId} order by sequence`
  const statusOf = async (orderId: string) => (await sql`select status, version from orders where id = ${orderId}`)[0] as { status: OrderStatus; version: number }

  t.test('GET /orders/{id}: every field of the order as placed, courier null, a free cancel, version 1', async (t) => {
    const owner = await account({ balance: 100_000 })
    const sent = shipment({
      sender_name: 'Ada Okoro',
      sender_phone: '+2348011111111',
      recipient_email: 'chidi@example.com',
      alternate_phone: '+2348033333333',
      item_category: 'electronics',
      item_description: 'A blue phone case in a box',
      declared_value: 12500.5,
      is_fragile: true,
      coupon: 'IGNORED',
    })
    const placed = await place(t, owner.apiKey, [sent])
    const [{ order_id: orderId, price }] = placed.orders
    t.match(orderId, ORDER_ID)
    t.equal(price, 3500)

    const order = await getOrder(t, owner.apiKey, orderId)
    t.match(order.tracking_url, /^http:\/\/localhost:3004\/t\/[A-Za-z0-9_-]{22}$/, 'a tracking page for the recipient, by a 128-bit token')
    t.match(order.created_at, ISO_UTC)
    t.strictSame(order, {
      order_id: orderId,
      placement_id: placed.placement_id,
      livemode: true,
      status: 'created',
      version: 1,
      price: 3500,
      currency: 'NGN',
      pricing_model: 'rate_card',
      vehicle_type: 'bike',
      option_id: owner.options['Up to 5 kg'],
      option_label: 'Up to 5 kg',
      delivery_mode: 'MOTORBIKE',
      distance_km: expectedKm(ISLAND, IKEJA),
      from_zone_name: 'Island',
      to_zone_name: 'Ikeja',
      dropoff_address: '5 Allen Avenue, Ikeja',
      dropoff_state: 'Lagos',
      recipient_name: 'Chidi Okafor',
      recipient_phone: '+2348020000000',
      item_name: 'Phone case',
      weight: 2,
      quantity: 1,
      quote_id: null,
      max_price: null,
      // Not sent: resolved from the business profile.
      pickup_address: '12 Admiralty Way, Lekki',
      pickup_state: 'Lagos',
      sender_name: 'Ada Okoro',
      sender_phone: '+2348011111111',
      recipient_email: 'chidi@example.com',
      alternate_phone: '+2348033333333',
      item_category: 'electronics',
      item_description: 'A blue phone case in a box',
      declared_value: 12500.5,
      is_fragile: true,
      pickup_latitude: ISLAND.lat,
      pickup_longitude: ISLAND.lng,
      dropoff_latitude: IKEJA.lat,
      dropoff_longitude: IKEJA.lng,
      proof: null,
      delivery_pin: null,
      tracking_url: order.tracking_url,
      courier: null,
      eta: null,
      proof_of_delivery: null,
      cancellation: { cancellable: true, fee: 0, free_until: null },
      refunded_amount: 0,
      history: [{ status: 'created', at: order.created_at }],
      created_at: order.created_at,
      updated_at: order.created_at,
    }, 'the whole resource, nothing missing, nothing extra (unknown fields dropped)')

    const bare = (await place(t, owner.apiKey, [shipment({ weight: 7, quantity: 2, vehicle_type: 'truck', option_id: owner.options['5-tonne truck'] })])).orders[0]!
    const truck = await getOrder(t, owner.apiKey, bare.order_id)
    t.match(truck, { vehicle_type: 'truck', delivery_mode: 'TRUCK', option_label: '5-tonne truck', weight: 7, quantity: 2, price: bare.price })
    for (const field of ['recipient_email', 'alternate_phone', 'item_category', 'item_description', 'declared_value', 'is_fragile', 'quote_id', 'max_price']) {
      t.equal(truck[field], null, `${field} not sent is null`)
    }
  })

  t.test('courier, history and version through assignment, unassignment and delivery; the preview follows', async (t) => {
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, [shipment()])
    const orderId = placed.orders[0]!.order_id
    const created = await getOrder(t, owner.apiKey, orderId)

    const assignedByOperator = await walk(t, orderId, [['assigned']])
    const assigned = await getOrder(t, owner.apiKey, orderId)
    const assignedAt = assigned.history[1]?.at as string
    t.match(assignedAt, ISO_UTC)
    t.strictSame(assigned, {
      ...created,
      status: 'assigned',
      version: 2,
      courier: SHOWN_COURIER,
      cancellation: { cancellable: true, fee: 0, free_until: plusSeconds(assignedAt, WINDOW_S) },
      history: [{ status: 'created', at: created.created_at }, { status: 'assigned', at: assignedAt }],
      updated_at: assignedAt,
    }, 'assigned: the courier, free until 120 s after the assignment')
    t.strictSame(assignedByOperator, assigned, 'what the operator was answered is what the business reads')

    // The window runs from the latest assignment: moved back past it, the preview shows the fee.
    await sql`update orders set assigned_at = assigned_at - interval '121 seconds' where id = ${orderId}`
    const late = await getOrder(t, owner.apiKey, orderId)
    t.strictSame(late.cancellation, { cancellable: true, fee: 875, free_until: plusSeconds(assignedAt, WINDOW_S - 121) }, '25 % of 3500 after the window')
    t.equal(late.version, 2, 'a read changes nothing')

    await walk(t, orderId, [['created', 'courier fell ill']])
    const unassigned = await getOrder(t, owner.apiKey, orderId)
    t.equal(unassigned.status, 'created')
    t.equal(unassigned.version, 3)
    t.equal(unassigned.courier, null, 'no courier holds it once unassigned')
    t.strictSame(unassigned.cancellation, { cancellable: true, fee: 0, free_until: null })
    t.strictSame(unassigned.history.at(-1), { status: 'created', at: unassigned.updated_at, reason: 'courier fell ill' }, 'the reason is in the history')

    await walk(t, orderId, [['assigned']])
    const reassigned = await getOrder(t, owner.apiKey, orderId)
    const reassignedAt = reassigned.history[3]?.at as string
    t.strictSame(reassigned.cancellation, { cancellable: true, fee: 0, free_until: plusSeconds(reassignedAt, WINDOW_S) }, 'a new assignment opens a new free window')
    t.equal(reassigned.version, 4)

    await walk(t, orderId, [['picked_up']])
    const pickedUp = await getOrder(t, owner.apiKey, orderId)
    t.strictSame(pickedUp.cancellation, { cancellable: false, fee: null, free_until: null }, 'not cancellable once picked up')
    t.strictSame(pickedUp.courier, SHOWN_COURIER, 'the courier stays with the parcel')

    await walk(t, orderId, [['delivered']])
    const delivered = await getOrder(t, owner.apiKey, orderId)
    t.equal(delivered.version, 6)
    t.strictSame(delivered.history.map((step: { status: string }) => step.status), ['created', 'assigned', 'created', 'assigned', 'picked_up', 'delivered'])
    const times = delivered.history.map((step: { at: string }) => Date.parse(step.at))
    t.ok(times.every((time: number, i: number) => i === 0 || time >= times[i - 1]!), 'history is oldest first')
    t.equal(delivered.updated_at, delivered.history.at(-1).at)
    t.equal(delivered.created_at, created.created_at, 'created_at never moves')
    t.equal(delivered.refunded_amount, 0)

    const refused = await advance(orderId, 'picked_up')
    t.strictSame(refused, { kind: 'refused', message: `cannot move ${orderId} from delivered to picked_up` }, 'delivered is terminal')
    t.strictSame((await eventsOf(orderId)).map((event) => [event.type, event.orderVersion]), [
      ['order.created', 1], ['order.assigned', 2], ['order.unassigned', 3], ['order.assigned', 4], ['order.picked_up', 5], ['order.delivered', 6],
    ], 'one event per change, at its version')
  })

  t.test('GET /orders: newest first, filters, limit, cursor paging', async (t) => {
    const owner = await account({ balance: 100_000 })
    const other = await account({ balance: 100_000, name: 'Other Ltd' })
    const theirs = await place(t, other.apiKey, [shipment(), shipment()])

    const p1 = await place(t, owner.apiKey, [shipment(), shipment({ weight: 3 }), shipment({ weight: 4 })])
    const p2 = await place(t, owner.apiKey, [shipment(), shipment({ weight: 1 })])
    const p3 = await place(t, owner.apiKey, [shipment(), shipment(), shipment(), shipment()])
    const [a0, a1, a2] = p1.orders.map((order) => order.order_id) as [string, string, string]
    const [b0] = p2.orders.map((order) => order.order_id) as [string]
    const c3 = p3.orders[3]!.order_id
    await walk(t, a0, [['assigned']])
    await walk(t, a1, [['assigned'], ['picked_up']])
    await walk(t, b0, [['assigned']])
    t.equal((await cancel(owner.apiKey, a2)).statusCode, 200)
    t.equal((await cancel(owner.apiKey, c3)).statusCode, 200)

    const all = await list(t, owner.apiKey)
    t.equal(all.data.length, 9, 'the nine orders of the business, not the other business\'s two')
    t.equal(all.has_more, false)
    t.equal(all.next_cursor, null)
    const ids = all.data.map((order) => order.order_id)
    t.notOk(ids.some((id) => theirs.orders.some((order) => order.order_id === id)), 'another business\'s orders never listed')
    // Newest first by (created_at, order_id), both descending.
    const sorted = [...all.data].sort((x, y) => (x.created_at === y.created_at ? (x.order_id < y.order_id ? 1 : -1) : x.created_at < y.created_at ? 1 : -1))
    t.strictSame(ids, sorted.map((order) => order.order_id), 'newest first, ties broken by order_id descending')
    t.strictSame(new Set(ids.slice(0, 4)), new Set(p3.orders.map((order) => order.order_id)), 'the latest placement first')
    t.strictSame(new Set(ids.slice(6)), new Set([a0, a1, a2]), 'the first placement last')
    for (const order of all.data) t.strictSame(order, await getOrder(t, owner.apiKey, order.order_id), `${order.order_id} listed as it reads`)
    const byStatus = (statuses: string[]) => all.data.filter((order) => statuses.includes(order.status)).map((order) => order.order_id)

    t.test('status: one value or a comma list', async (t) => {
      t.strictSame((await list(t, owner.apiKey, 'status=assigned')).data.map((order) => order.order_id), byStatus(['assigned']))
      t.strictSame(new Set(byStatus(['assigned'])), new Set([a0, b0]))
      const two = await list(t, owner.apiKey, 'status=assigned,cancelled')
      t.strictSame(two.data.map((order) => order.order_id), byStatus(['assigned', 'cancelled']))
      t.equal(two.data.length, 4)
      t.strictSame((await list(t, owner.apiKey, 'status=picked_up')).data.map((order) => order.order_id), [a1])
      t.strictSame((await list(t, owner.apiKey, 'status=created')).data.length, 4)
      const none = await list(t, owner.apiKey, 'status=delivered,returned')
      t.strictSame(none, { data: [], has_more: false, next_cursor: null })
    })

    t.test('placement_id', async (t) => {
      t.strictSame((await list(t, owner.apiKey, `placement_id=${p2.placement_id}`)).data.map((order) => order.order_id), ids.filter((id) => p2.orders.some((order) => order.order_id === id)))
      t.strictSame((await list(t, owner.apiKey, `placement_id=${theirs.placement_id}`)).data, [], 'another business\'s placement lists nothing')
      const both = await list(t, owner.apiKey, `placement_id=${p1.placement_id}&status=assigned,picked_up`)
      t.strictSame(both.data.map((order) => order.order_id), ids.filter((id) => id === a0 || id === a1), 'filters combine')
    })

    t.test('created_gte and created_lt', async (t) => {
      const p2At = all.data.find((order) => order.order_id === b0)!.created_at as string
      const p3At = all.data.find((order) => order.order_id === c3)!.created_at as string
      t.ok(p2At < p3At, 'the placements were made one after the other')
      const since = await list(t, owner.apiKey, `created_gte=${p2At}`)
      t.strictSame(since.data.map((order) => order.order_id), all.data.filter((order) => order.created_at >= p2At).map((order) => order.order_id))
      t.equal(since.data.length, 6, 'the second and third placements, the bound included')
      const before = await list(t, owner.apiKey, `created_lt=${p3At}`)
      t.strictSame(before.data.map((order) => order.order_id), all.data.filter((order) => order.created_at < p3At).map((order) => order.order_id))
      t.equal(before.data.length, 5, 'the first and second placements, the bound excluded')
      const between = await list(t, owner.apiKey, `created_gte=${p2At}&created_lt=${p3At}`)
      t.strictSame(new Set(between.data.map((order) => order.order_id)), new Set(p2.orders.map((order) => order.order_id)))
      // The same instant written with an offset.
      const withOffset = new Date(Date.parse(p2At) + 3600_000).toISOString().replace('Z', '+01:00')
      t.strictSame((await list(t, owner.apiKey, `created_gte=${encodeURIComponent(withOffset)}`)).data, since.data, 'an offset is honoured')
      t.equal((await list(t, owner.apiKey, 'created_gte=2020-01-01')).data.length, 9, 'a date alone is midnight UTC')
      t.strictSame((await list(t, owner.apiKey, 'created_lt=2020-01-01')).data, [])
    })

    t.test('limit bounds and cursor paging through every page', async (t) => {
      t.equal((await list(t, owner.apiKey, 'limit=100')).data.length, 9)
      const one = await list(t, owner.apiKey, 'limit=1')
      t.strictSame(one.data.map((order) => order.order_id), ids.slice(0, 1))
      t.equal(one.has_more, true)
      t.type(one.next_cursor, 'string')

      for (const limit of [1, 2, 3, 4, 9]) {
        const seen: string[] = []
        let cursor: string | null = null
        let pages = 0
        do {
          const page = await list(t, owner.apiKey, `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
          pages++
          seen.push(...page.data.map((order) => order.order_id))
          t.equal(page.has_more, seen.length < 9, `limit ${limit}, page ${pages}: has_more`)
          t.equal(page.next_cursor === null, !page.has_more, 'next_cursor is null exactly on the last page')
          t.ok(page.data.length <= limit)
          cursor = page.next_cursor
        } while (cursor !== null && pages < 20)
        t.strictSame(seen, ids, `limit ${limit}: the pages together are the list, in order, each order once`)
        t.equal(pages, Math.ceil(9 / limit), `limit ${limit}: ${Math.ceil(9 / limit)} pages (a full last page has no extra empty one)`)
      }

      const filtered: string[] = []
      let cursor: string | null = null
      do {
        const page = await list(t, owner.apiKey, `status=assigned,cancelled&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
        filtered.push(...page.data.map((order) => order.order_id))
        cursor = page.next_cursor
      } while (cursor !== null && filtered.length < 10)
      t.strictSame(filtered, byStatus(['assigned', 'cancelled']), 'the cursor pages a filtered list too')
    })

    t.test('a page is stable while new orders arrive (keyset, not OFFSET)', async (t) => {
      const first = await list(t, owner.apiKey, 'limit=4')
      const newer = await place(t, owner.apiKey, [shipment(), shipment()])
      const rest: string[] = []
      let cursor = first.next_cursor
      while (cursor !== null && rest.length < 20) {
        const page = await list(t, owner.apiKey, `limit=4&cursor=${encodeURIComponent(cursor)}`)
        rest.push(...page.data.map((order) => order.order_id))
        cursor = page.next_cursor
      }
      t.strictSame([...first.data.map((order) => order.order_id), ...rest], ids, 'nothing repeated, nothing skipped')
      const fresh = await list(t, owner.apiKey, 'limit=2')
      t.strictSame(new Set(fresh.data.map((order) => order.order_id)), new Set(newer.orders.map((order) => order.order_id)), 'a new first page starts with the new orders')
    })

    t.test('each bad query value is a 400 naming it', async (t) => {
      const statusMessage = 'status must be one of created, assigned, picked_up, delivered, failed, returned, cancelled'
      const limitMessage = 'limit must be an integer from 1 to 100'
      const cases: [string, string][] = [
        ['status=bogus', statusMessage],
        ['status=assigned,shipped', statusMessage],
        ['status=created,', statusMessage],
        ['status=', statusMessage],
        ['placement_id=42', 'placement_id must be a UUID'],
        ['placement_id=', 'placement_id must be a UUID'],
        ['created_gte=yesterday', 'created_gte must be an ISO 8601 date-time'],
        ['created_gte=1700000000', 'created_gte must be an ISO 8601 date-time'],
        ['created_lt=2026-13-01T00:00:00Z', 'created_lt must be an ISO 8601 date-time'],
        ['created_lt=', 'created_lt must be an ISO 8601 date-time'],
        // ISO 8601 has a year 0000; PostgreSQL has none (these were a 500).
        ['created_gte=0000-01-01T00:00:00Z', 'created_gte must be between 0001-01-01 and 9999-12-31'],
        ['created_lt=0001-01-01T00:00:00%2B01:00', 'created_lt must be between 0001-01-01 and 9999-12-31'],
        ['created_lt=9999-12-31T23:00:00-02:00', 'created_lt must be between 0001-01-01 and 9999-12-31'],
        ['limit=0', limitMessage],
        ['limit=101', limitMessage],
        ['limit=-1', limitMessage],
        ['limit=1.5', limitMessage],
        ['limit=ten', limitMessage],
        ['limit=', limitMessage],
        ['cursor=not-a-cursor', 'cursor is not valid'],
        [`cursor=${Buffer.from(JSON.stringify({ t: 'noon', id: 'ORD-X' })).toString('base64url')}`, 'cursor is not valid'],
        [`cursor=${Buffer.from('[1,2]').toString('base64url')}`, 'cursor is not valid'],
        [`cursor=${Buffer.from(JSON.stringify({ t: '0000-01-01T00:00:00.000Z', id: 'ORD-X' })).toString('base64url')}`, 'cursor is not valid'],
        // Postgres's text holds no NUL (this was a 500).
        [`cursor=${Buffer.from(JSON.stringify({ t: '2026-01-01T00:00:00.000Z', id: '\u0000' })).toString('base64url')}`, 'cursor is not valid'],
        [`cursor=${Buffer.from(JSON.stringify({ t: '2026-01-01T00:00:00.000Z', id: 'not an order id' })).toString('base64url')}`, 'cursor is not valid'],
        ['stauts=created', "unknown query parameter 'stauts'"],
        ['limit=1&limit=2', 'limit must be given once'],
      ]
      for (const [query, message] of cases) {
        assertError(t, await get(owner.apiKey, `${ORDERS}?${query}`), { status: 400, path: ORDERS, message })
      }
    })
  })

  t.test('cancel in created: free, the whole price back as one refund entry in the same transaction', async (t) => {
    const owner = await account({ balance: 100_000 })
    const orderId = (await place(t, owner.apiKey, [shipment()])).orders[0]!.order_id
    const before = await balanceOf(owner.businessId)
    const created = await getOrder(t, owner.apiKey, orderId)

    const response = await cancel(owner.apiKey, orderId, { reason: 'customer changed their mind' })
    t.equal(response.statusCode, 200, response.body)
    const cancelled = response.json()
    const at = cancelled.history.at(-1)?.at
    t.match(at, ISO_UTC)
    t.strictSame(cancelled, {
      ...created,
      status: 'cancelled',
      version: 2,
      cancellation: { cancellable: false, fee: null, free_until: null },
      refunded_amount: 3500,
      history: [...created.history, { status: 'cancelled', at, reason: 'customer changed their mind' }],
      updated_at: at,
    })
    t.strictSame(await getOrder(t, owner.apiKey, orderId), cancelled, 'the answer is the order as it now reads')
    t.equal(await balanceOf(owner.businessId), before + 350_000, 'the whole price is back')

    const refunds = await refundsOf(orderId)
    t.equal(refunds.length, 1, 'one refund entry')
    t.match(refunds[0], { amount: 350_000, businessId: owner.businessId, balanceAfter: before + 350_000 })
    // One transaction wrote the order, its event, the refund and the wallet: they share its id.
    const [writers] = await sql`
      select (select xmin::text from orders where id = ${orderId}) as order_tx,
             (select xmin::text from events where order_id = ${orderId} and type = 'order.cancelled') as event_tx,
             (select xmin::text from ledger_entries where order_id = ${orderId} and kind = 'refund') as refund_tx,
             (select xmin::text from wallets where business_id = ${owner.businessId}) as wallet_tx`
    t.ok(writers!.orderTx && writers!.orderTx === writers!.eventTx && writers!.eventTx === writers!.refundTx && writers!.refundTx === writers!.walletTx, `one transaction: ${JSON.stringify(writers)}`)

    const again = await cancel(owner.apiKey, orderId)
    t.equal(again.statusCode, 200, 'a second cancel answers 200')
    t.strictSame(again.json(), cancelled, 'with the order as it is')
    t.equal(await balanceOf(owner.businessId), before + 350_000, 'and moves no money')
    t.equal((await refundsOf(orderId)).length, 1)
    t.strictSame((await eventsOf(orderId)).map((event) => event.type), ['order.created', 'order.cancelled'], 'and writes no event')
  })

  t.test('cancel in assigned within the free window: free, courier released', async (t) => {
    const owner = await account({ balance: 100_000 })
    const orderId = (await place(t, owner.apiKey, [shipment()])).orders[0]!.order_id
    await walk(t, orderId, [['assigned']])
    const before = await balanceOf(owner.businessId)
    const response = await cancel(owner.apiKey, orderId)
    t.equal(response.statusCode, 200, response.body)
    t.match(response.json(), { status: 'cancelled', version: 3, refunded_amount: 3500, courier: null, cancellation: { cancellable: false, fee: null, free_until: null } })
    t.strictSame(response.json().history.at(-1), { status: 'cancelled', at: response.json().updated_at }, 'no reason sent, none recorded')
    t.equal(await balanceOf(owner.businessId), before + 350_000)
    t.strictSame((await refundsOf(orderId)).map((refund) => refund.amount), [350_000])
  })

  t.test('cancel in assigned after the window: cancellation_fee_percent of the price, rounded half away from zero to the kobo', async (t) => {
    // A price whose 25 % ends in half a kobo: 350002 × 0.25 = 87500.5 → 87501.
    const owner = await account({ balance: 100_000, card: cardWithIslandIkejaBikePrice(3500.02, `Odd card ${Date.now()}`) })
    const placed = await place(t, owner.apiKey, [shipment(), shipment(), shipment(), shipment(), shipment()])
    t.strictSame(placed.orders.map((order) => order.price), [3500.02, 3500.02, 3500.02, 3500.02, 3500.02])
    const [quarter, third, whole, none, inWindow] = placed.orders.map((order) => order.order_id) as [string, string, string, string, string]
    for (const id of [quarter, third, whole, none]) await walk(t, id, [['assigned']])
    t.teardown(() => changePlatformRates(sql, { cancelFreeWindowS: WINDOW_S, cancellationFeePercent: 25 }))
    // The window is a platform rate: at 0 s every assigned order is past it.
    await changePlatformRates(sql, { cancelFreeWindowS: 0 })

    const cases: [string, number, number][] = [
      // [order, fee percent, fee in kobo]
      [quarter, 25, 87_501],
      [third, 33.33, 116_656], // 350002 × 0.3333 = 116655.67
      [whole, 100, 350_002],
      [none, 0, 0],
    ]
    for (const [orderId, percent, fee] of cases) {
      await changePlatformRates(sql, { cancellationFeePercent: percent })
      const preview = await getOrder(t, owner.apiKey, orderId)
      t.strictSame(preview.cancellation, { cancellable: true, fee: fee / 100, free_until: preview.history[1].at }, `${percent} %: the preview shows the fee; the window ended at the assignment`)
      const before = await balanceOf(owner.businessId)
      const response = await cancel(owner.apiKey, orderId)
      t.equal(response.statusCode, 200, response.body)
      const refund = 350_002 - fee
      t.equal(response.json().refunded_amount, refund / 100, `${percent} %: refunded ${refund / 100}`)
      t.equal(await balanceOf(owner.businessId), before + refund, `${percent} %: the wallet gets price − fee`)
      // A refund of nothing writes no entry (the ledger holds no zero amounts).
      t.strictSame((await refundsOf(orderId)).map((entry) => entry.amount), refund > 0 ? [refund] : [], `${percent} %: the refund entry`)
      t.equal((await statusOf(orderId)).status, 'cancelled')
    }

    // In created there is no window to miss, whatever the rates.
    const before = await balanceOf(owner.businessId)
    t.strictSame((await getOrder(t, owner.apiKey, inWindow)).cancellation, { cancellable: true, fee: 0, free_until: null })
    t.equal((await cancel(owner.apiKey, inWindow)).json().refunded_amount, 3500.02)
    t.equal(await balanceOf(owner.businessId), before + 350_002)
  })

  t.test('with the default rates, 120 s after the latest assignment the fee is 25 %', async (t) => {
    const owner = await account({ balance: 100_000 })
    const orderId = (await place(t, owner.apiKey, [shipment()])).orders[0]!.order_id
    await walk(t, orderId, [['assigned']])
    await sql`update orders set assigned_at = assigned_at - make_interval(secs => ${WINDOW_S + 1}) where id = ${orderId}`
    const before = await balanceOf(owner.businessId)
    const response = await cancel(owner.apiKey, orderId)
    t.equal(response.json().refunded_amount, 2625)
    t.equal(await balanceOf(owner.businessId), before + 262_500)
  })

  t.test('from picked_up on a cancel is a 409 that moves nothing', async (t) => {
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, [shipment(), shipment(), shipment(), shipment()])
    const [pickedUp, delivered, failed, returned] = placed.orders.map((order) => order.order_id) as [string, string, string, string]
    await walk(t, pickedUp, [['assigned'], ['picked_up']])
    await walk(t, delivered, [['assigned'], ['picked_up'], ['delivered']])
    const before = await balanceOf(owner.businessId)
    await walk(t, failed, [['assigned'], ['picked_up'], ['failed', 'recipient unreachable']])
    await walk(t, returned, [['assigned'], ['picked_up'], ['failed', 'address not found'], ['returned']])
    t.equal(await balanceOf(owner.businessId), before, 'failed and returned move no money')

    const cases: [string, string][] = [[pickedUp, 'it was picked up'], [delivered, 'it is delivered'], [failed, 'it failed'], [returned, 'it was returned']]
    for (const [orderId, why] of cases) {
      const version = (await statusOf(orderId)).version
      const path = `${ORDERS}/${orderId}/cancel`
      assertError(t, await cancel(owner.apiKey, orderId, { reason: 'too late' }), { status: 409, path, message: `${orderId} can no longer be cancelled: ${why}` })
      t.equal((await statusOf(orderId)).version, version, 'the order is unchanged')
      t.strictSame((await getOrder(t, owner.apiKey, orderId)).cancellation, { cancellable: false, fee: null, free_until: null })
    }
    t.equal(await balanceOf(owner.businessId), before, 'no money moved')
    t.equal((await sql`select count(*)::int as n from ledger_entries where business_id = ${owner.businessId} and kind = 'refund'`)[0]!.n, 0)
  })

  t.test('the cancel body: optional, reason at most 255 characters', async (t) => {
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, [shipment(), shipment(), shipment(), shipment(), shipment()])
    const [noBody, emptyJson, emptyObject, nullReason, longest] = placed.orders.map((order) => order.order_id) as [string, string, string, string, string]
    const json = { 'content-type': 'application/json' }

    const bad: [unknown, Record<string, string>, string, { field?: string; message: string }[] | undefined][] = [
      [{ reason: 'x'.repeat(256) }, {}, 'reason must be shorter than or equal to 255 characters', [{ field: 'reason', message: 'reason must be shorter than or equal to 255 characters' }]],
      [{ reason: 42 }, {}, 'reason must be a string', [{ field: 'reason', message: 'reason must be a string' }]],
      ['{"reason": "unterminated', json, 'Malformed JSON in request body', undefined],
    ]
    for (const [payload, headers, message, errors] of bad) {
      const path = `${ORDERS}/${noBody}/cancel`
      assertError(t, await cancel(owner.apiKey, noBody, payload, headers), { status: 400, path, message, ...(errors && { errors }) })
    }
    t.equal((await statusOf(noBody)).status, 'created', 'a refused body cancels nothing')

    t.equal((await cancel(owner.apiKey, noBody)).statusCode, 200, 'no body, no content type')
    t.equal((await cancel(owner.apiKey, emptyJson, '', json)).statusCode, 200, 'an empty body with Content-Type: application/json')
    t.equal((await cancel(owner.apiKey, emptyObject, {})).statusCode, 200, 'an empty JSON object')
    t.equal((await cancel(owner.apiKey, nullReason, { reason: null, extra: 'ignored' })).statusCode, 200, 'a null reason is no reason; unknown fields are ignored')
    const kept = await cancel(owner.apiKey, longest, { reason: 'r'.repeat(255) })
    t.equal(kept.statusCode, 200, '255 characters are allowed')
    t.equal(kept.json().history.at(-1).reason, 'r'.repeat(255), 'and recorded in the history')
    for (const id of [noBody, emptyJson, emptyObject, nullReason, longest]) t.equal((await statusOf(id)).status, 'cancelled')
  })

  t.test('an unknown order, or another business\'s, is a 404 and is left alone', async (t) => {
    const owner = await account({ balance: 100_000 })
    const stranger = await account({ balance: 100_000, name: 'Stranger Ltd' })
    const orderId = (await place(t, owner.apiKey, [shipment()])).orders[0]!.order_id
    const before = await balanceOf(owner.businessId)
    for (const id of ['ORD-0000000000', 'ORD-lowercase0', 'not-an-order', orderId.slice(0, -1)]) {
      assertError(t, await get(owner.apiKey, `${ORDERS}/${id}`), { status: 404, path: `${ORDERS}/${id}`, message: `Order ${id} was not found` })
      assertError(t, await cancel(owner.apiKey, id), { status: 404, path: `${ORDERS}/${id}/cancel`, message: `Order ${id} was not found` })
    }
    assertError(t, await get(stranger.apiKey, `${ORDERS}/${orderId}`), { status: 404, path: `${ORDERS}/${orderId}`, message: `Order ${orderId} was not found` })
    assertError(t, await cancel(stranger.apiKey, orderId), { status: 404, path: `${ORDERS}/${orderId}/cancel`, message: `Order ${orderId} was not found` })
    t.strictSame(await statusOf(orderId), { status: 'created', version: 1 }, 'another business cannot cancel it')
    t.equal(await balanceOf(owner.businessId), before)
    t.equal((await refundsOf(orderId)).length, 0)
    t.strictSame((await list(t, stranger.apiKey)).data, [], 'nor list it')
  })

  t.test('scopes: orders:read reads everything, changes nothing', async (t) => {
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, [shipment()])
    const orderId = placed.orders[0]!.order_id
    const reader = (await createApiKey(sql, owner.businessId, ['orders:read'])).apiKey
    const eventId = ((await sql`select id from events where order_id = ${orderId}`)[0] as { id: string }).id

    const reads: [string, number][] = [
      [ORDERS, 200],
      [`${ORDERS}/${orderId}`, 200],
      ['/v2/business/wallet', 200],
      ['/v2/business/wallet/transactions', 200],
      ['/v2/business/events', 200],
      [`/v2/business/events/${eventId}`, 200],
      // The stored answer of the placement, as the placement itself was answered.
      [`/v2/business/placements/${placed.placement_id}`, 201],
    ]
    for (const [url, status] of reads) {
      const asReader = await get(reader, url)
      t.equal(asReader.statusCode, status, `orders:read may GET ${url}: ${asReader.body}`)
      const asWriter = await get(owner.apiKey, url)
      t.equal(asWriter.statusCode, status, `orders:write may GET ${url}`)
      t.strictSame(asReader.json(), asWriter.json(), `${url} reads the same with either scope`)
    }
    t.equal((await get(reader, ORDERS)).json().data[0].order_id, orderId)

    const before = await balanceOf(owner.businessId)
    const writes: [string, string, unknown][] = [
      [`${ORDERS}/${orderId}/cancel`, 'cancel', undefined],
      [`${ORDERS}/ORD-0000000000/cancel`, 'cancel of an unknown order: scope before lookup', undefined],
      [QUOTE, 'quote', quoteBody()],
      [PLACE, 'place', [shipment()]],
    ]
    for (const [url, what, payload] of writes) {
      const response = await gateway.inject({ method: 'POST', url, headers: bearer(reader), ...(payload !== undefined && { payload: payload as never }) })
      t.comment(what)
      assertError(t, response, { status: 403, path: url, message: 'Insufficient API key scope' })
    }
    t.strictSame(await statusOf(orderId), { status: 'created', version: 1 }, 'nothing cancelled')
    t.equal(await balanceOf(owner.businessId), before, 'nothing charged or refunded')
    t.equal((await sql`select count(*)::int as n from placements where business_id = ${owner.businessId}`)[0]!.n, 1, 'nothing placed')
    assertError(t, await gateway.inject({ method: 'GET', url: ORDERS }), { status: 401, path: ORDERS, message: 'Invalid API key' })

    // webhooks:write is a scope of its own: it neither reads nor cancels orders (DESIGN.md 13.2).
    const hooksOnly = (await createApiKey(sql, owner.businessId, ['webhooks:write'])).apiKey
    for (const [url, status] of reads) {
      if (status !== 200) continue
      assertError(t, await get(hooksOnly, url), { status: 403, path: url, message: 'Insufficient API key scope' })
    }
    assertError(t, await cancel(hooksOnly, orderId), { status: 403, path: `${ORDERS}/${orderId}/cancel`, message: 'Insufficient API key scope' })
    t.strictSame(await statusOf(orderId), { status: 'created', version: 1 })
  })

  t.test('twenty concurrent cancels of one assigned order refund it exactly once', async (t) => {
    const owner = await account({ balance: 100_000 })
    const [free, charged] = (await place(t, owner.apiKey, [shipment(), shipment()])).orders.map((order) => order.order_id) as [string, string]
    await walk(t, free, [['assigned']])
    await walk(t, charged, [['assigned']])
    await sql`update orders set assigned_at = assigned_at - make_interval(secs => ${WINDOW_S + 5}) where id = ${charged}`

    for (const [orderId, refund] of [[free, 350_000], [charged, 262_500]] as const) {
      const before = await balanceOf(owner.businessId)
      const responses = await Promise.all(Array.from({ length: 20 }, () => cancel(owner.apiKey, orderId, { reason: 'race' })))
      t.strictSame(responses.map((response) => response.statusCode), Array(20).fill(200), 'every cancel answers 200')
      const bodies = responses.map((response) => response.json())
      for (const body of bodies) t.strictSame(body, bodies[0], 'all with the same order')
      t.match(bodies[0], { status: 'cancelled', version: 3, refunded_amount: refund / 100 })
      t.strictSame((await refundsOf(orderId)).map((entry) => entry.amount), [refund], 'one refund entry')
      t.equal(await balanceOf(owner.businessId), before + refund, 'refunded once')
      t.strictSame((await eventsOf(orderId)).map((event) => event.type), ['order.created', 'order.assigned', 'order.cancelled'], 'one cancel event')
    }
  })

  t.test('a cancel racing the pick-up: exactly one wins, and the money matches', async (t) => {
    const ROUNDS = 12
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, Array.from({ length: ROUNDS }, () => shipment()))
    const ids = placed.orders.map((order) => order.order_id)
    for (const id of ids) await walk(t, id, [['assigned']])
    const start = await balanceOf(owner.businessId)
    let cancels = 0
    for (const [round, orderId] of ids.entries()) {
      // Alternate which request starts first, so either can reach the row lock first.
      const advanceFirst = round % 2 === 0
      const pickUp = advanceFirst ? advance(orderId, 'picked_up') : null
      const cancelling = cancel(owner.apiKey, orderId)
      const [cancelled, advanced] = await Promise.all([cancelling, pickUp ?? advance(orderId, 'picked_up')])
      const state = await statusOf(orderId)
      const refunds = await refundsOf(orderId)
      const types = (await eventsOf(orderId)).map((event) => event.type)
      t.equal(state.version, 3, `round ${round}: one change made`)
      if (cancelled.statusCode === 200) {
        cancels++
        t.strictSame(advanced, { kind: 'refused', message: `cannot move ${orderId} from cancelled to picked_up` }, `round ${round}: the cancel won, the pick-up is refused`)
        t.equal(state.status, 'cancelled')
        t.strictSame(refunds.map((entry) => entry.amount), [350_000], 'refunded in full, once')
        t.strictSame(types, ['order.created', 'order.assigned', 'order.cancelled'])
      } else {
        t.equal(advanced.kind, 'changed', `round ${round}: the pick-up won`)
        assertError(t, cancelled, { status: 409, path: `${ORDERS}/${orderId}/cancel`, message: `${orderId} can no longer be cancelled: it was picked up` })
        t.equal(state.status, 'picked_up')
        t.equal(refunds.length, 0, 'nothing refunded')
        t.strictSame(types, ['order.created', 'order.assigned', 'order.picked_up'])
      }
    }
    t.comment(`${cancels} of ${ROUNDS} races won by the cancel`)
    t.equal(await balanceOf(owner.businessId), start + cancels * 350_000, 'the wallet got back exactly the cancelled orders')
  })

  t.test('every wallet of this file equals its ledger (credits − debits + refunds), and reads so', async (t) => {
    await assertLedgersOf(t, sql, businesses)
    for (const businessId of businesses) {
      const key = (await createApiKey(sql, businessId, ['orders:read'])).apiKey
      const wallet = (await get(key, '/v2/business/wallet')).json()
      t.equal(wallet.balance * 100, await balanceOf(businessId), 'GET /wallet shows the balance')
    }
  })
})
