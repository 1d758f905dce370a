import t, { type Test } from 'tap'
import type { Courier, OrderStatus } from '../../../shared/courier.js'
import type { Sql } from '../../../shared/db/sql.js'
import { creditWallet } from '../../../shared/db/wallets.js'
import { toMinor } from '../../../shared/money.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { accountSeeder } from '../../helpers/accounts.js'
import { assertError, ISO_UTC, PLACE } from '../../helpers/gateway.js'
import { KANO, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { assertLedgersOf } from '../../helpers/db.js'

// DESIGN.md section 8: the wallet, its statement and the events outbox, through the gateway.

const WALLET = '/v2/business/wallet'
const TRANSACTIONS = '/v2/business/wallet/transactions'
const EVENTS = '/v2/business/events'
const EVENT_ID = /^evt_[0-9A-HJKMNP-TV-Z]{20}$/
const TXN_ID = /^txn_[0-9A-F]{16}_[1-9][0-9]*$/
const COURIER: Courier = { name: 'Musa Bello', phone: '+2348090000000', vehicle_plate: null }
const WINDOW_S = 120
const EVENT_TYPES = 'order.created, order.assigned, order.unassigned, order.picked_up, order.delivered, order.failed, order.returned, order.cancelled'

type Placed = { placement_id: string; charged_total: number; orders: { order_id: string; price: number }[] }
// The API's JSON, read field by field as the tests need it.
type Resource = Record<string, any>
type Page = { data: Resource[]; has_more: boolean; next_cursor?: string | null }

const kobo = (major: number) => Math.round(major * 100)
const plusSeconds = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString()
const withoutCancellation = ({ cancellation: _cancellation, ...rest }: Resource) => rest
const txnNumber = (id: string) => Number(id.slice(id.lastIndexOf('_') + 1))

t.test('wallet, statement and events through the gateway', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const { account, businesses } = accountSeeder(sql)

  const get = (apiKey: string, url: string) => gateway.inject({ method: 'GET', url, headers: bearer(apiKey) })
  const read = async (t: Test, apiKey: string, url: string): Promise<any> => {
    const response = await get(apiKey, url)
    t.equal(response.statusCode, 200, `GET ${url}: ${response.body}`)
    return response.json()
  }
  const place = async (t: Test, apiKey: string, shipments: unknown[]): Promise<Placed> => {
    const response = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(apiKey), payload: shipments as never })
    t.equal(response.statusCode, 201, `placed: ${response.body}`)
    return response.json()
  }
  const placeRefused = async (t: Test, apiKey: string, shipments: unknown[], message: string) => {
    const response = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(apiKey), payload: shipments as never })
    t.equal(response.statusCode, 400, `refused: ${response.body}`)
    t.equal(response.json().message, message)
  }
  const cancel = async (t: Test, apiKey: string, orderId: string) => {
    const response = await gateway.inject({ method: 'POST', url: `/v2/business/orders/${orderId}/cancel`, headers: bearer(apiKey) })
    t.equal(response.statusCode, 200, `cancelled ${orderId}: ${response.body}`)
    return response.json()
  }
  const advance = async (t: Test, orderId: string, to: OrderStatus, reason: string | null = null) => {
    const outcome = await changeOrder(sql, { orderId, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? COURIER : null, reason })
    t.equal(outcome.kind, 'changed', `${orderId} → ${to}: ${JSON.stringify(outcome)}`)
  }
  const credit = (businessId: string, major: number, reference: string) => sql.begin((tx) => creditWallet(tx, businessId, toMinor(major), reference))
  const balanceOf = async (businessId: string): Promise<number> => (await sql`select balance from wallets where business_id = ${businessId}`)[0]!.balance
  const walletUpdatedAt = async (businessId: string): Promise<string> => ((await sql`select updated_at from wallets where business_id = ${businessId}`)[0]!.updatedAt as Date).toISOString()
  /** Every page of a list, following next_cursor (statement) or the last sequence (events). */
  const allPages = async (t: Test, apiKey: string, first: string, next: (page: Page) => string | null): Promise<{ items: Resource[]; pages: Page[] }> => {
    const pages: Page[] = []
    let url: string | null = first
    while (url !== null && pages.length < 50) {
      const page: Page = await read(t, apiKey, url)
      pages.push(page)
      url = next(page)
    }
    return { items: pages.flatMap((page) => page.data), pages }
  }

  t.test('GET /wallet: balance, currency, livemode, updated_at', async (t) => {
    const empty = await account({ name: 'Empty Ltd' })
    t.strictSame(await read(t, empty.apiKey, WALLET), { balance: 0, currency: 'NGN', livemode: true, updated_at: await walletUpdatedAt(empty.businessId) })

    const owner = await account({ balance: 100_000 })
    const funded = await read(t, owner.apiKey, WALLET)
    t.strictSame(funded, { balance: 100_000, currency: 'NGN', livemode: true, updated_at: await walletUpdatedAt(owner.businessId) })
    t.match(funded.updated_at, ISO_UTC)

    const placed = await place(t, owner.apiKey, [shipment(), shipment()])
    const charged = await read(t, owner.apiKey, WALLET)
    t.equal(charged.balance, 93_000, 'the placement is debited')
    t.equal(charged.updated_at, await walletUpdatedAt(owner.businessId))
    t.ok(charged.updated_at > funded.updated_at, 'updated_at moves with the balance')

    await cancel(t, owner.apiKey, placed.orders[0]!.order_id)
    await credit(owner.businessId, 0.05, 'coins')
    const after = await read(t, owner.apiKey, WALLET)
    t.equal(after.balance, 96_500.05, 'a refund and a credit, to the kobo, in major units')
    t.ok(after.updated_at > charged.updated_at)
    t.equal(kobo(after.balance), await balanceOf(owner.businessId))
  })

  t.test('GET /wallet/transactions: credit, debit and refund entries, balance_after exact', async (t) => {
    const owner = await account({ balance: 100_000 })
    const stranger = await account({ balance: 5_000, name: 'Stranger Ltd' })
    await credit(owner.businessId, 250.75, 'top-up-1')
    const p1 = await place(t, owner.apiKey, [shipment(), shipment()])
    const p2 = await place(t, owner.apiKey, [shipment()])
    const [a0, a1] = p1.orders.map((order) => order.order_id) as [string, string]
    await cancel(t, owner.apiKey, a0)
    await advance(t, a1, 'assigned')
    await sql`update orders set assigned_at = assigned_at - make_interval(secs => ${WINDOW_S + 1}) where id = ${a1}`
    await cancel(t, owner.apiKey, a1)
    await credit(owner.businessId, 0.01, 'top-up-2')
    // A refused placement writes no entry.
    await placeRefused(t, owner.apiKey, Array.from({ length: 40 }, () => shipment()), 'Insufficient wallet balance')
    // A repeated reference credits once.
    await credit(owner.businessId, 250.75, 'top-up-1')

    const page = await read(t, owner.apiKey, `${TRANSACTIONS}?limit=100`)
    t.equal(page.has_more, false)
    t.equal(page.next_cursor, null)
    const newestFirst: Resource[] = page.data
    const numbers = newestFirst.map((entry) => txnNumber(entry.id))
    // Numbered in this wallet alone (the platform's other wallets wrote entries in between), newest first.
    t.same(numbers, [7, 6, 5, 4, 3, 2, 1], 'newest first, each entry its number in this wallet')
    t.equal(new Set(newestFirst.map((entry) => entry.id.slice(0, entry.id.lastIndexOf('_')))).size, 1, 'one wallet name on every entry')
    const entries = [...newestFirst].reverse()
    const base = (entry: Resource) => ({ id: entry.id, created_at: entry.created_at })
    t.strictSame(entries, [
      { ...base(entries[0]!), type: 'credit', amount: 100_000, balance_after: 100_000, reference: 'seed', placement_id: null, order_id: null },
      { ...base(entries[1]!), type: 'credit', amount: 250.75, balance_after: 100_250.75, reference: 'top-up-1', placement_id: null, order_id: null },
      { ...base(entries[2]!), type: 'debit', amount: 7000, balance_after: 93_250.75, reference: null, placement_id: p1.placement_id, order_id: null },
      { ...base(entries[3]!), type: 'debit', amount: 3500, balance_after: 89_750.75, reference: null, placement_id: p2.placement_id, order_id: null },
      { ...base(entries[4]!), type: 'refund', amount: 3500, balance_after: 93_250.75, reference: null, placement_id: null, order_id: a0 },
      { ...base(entries[5]!), type: 'refund', amount: 2625, balance_after: 95_875.75, reference: null, placement_id: null, order_id: a1 },
      { ...base(entries[6]!), type: 'credit', amount: 0.01, balance_after: 95_875.76, reference: 'top-up-2', placement_id: null, order_id: null },
    ], 'every entry, oldest first, amounts positive in major units')
    for (const entry of entries) {
      t.match(entry.id, TXN_ID)
      t.match(entry.created_at, ISO_UTC)
    }
    t.equal(replay(t, entries), kobo((await read(t, owner.apiKey, WALLET)).balance), 'replaying the statement oldest first gives the balance')

    t.test('paging with the cursor', async (t) => {
      for (const limit of [1, 2, 3, 7]) {
        const { items, pages } = await allPages(t, owner.apiKey, `${TRANSACTIONS}?limit=${limit}`, (p) => (p.next_cursor ? `${TRANSACTIONS}?limit=${limit}&cursor=${encodeURIComponent(p.next_cursor)}` : null))
        t.strictSame(items, newestFirst, `limit ${limit}: the pages together are the statement`)
        t.equal(pages.length, Math.ceil(7 / limit), `limit ${limit}: no empty last page`)
        pages.forEach((p, i) => {
          const last = i === pages.length - 1
          t.equal(p.has_more, !last, `limit ${limit}, page ${i + 1}: has_more`)
          t.equal(p.next_cursor === null, last)
        })
      }
      const defaultPage = await read(t, owner.apiKey, TRANSACTIONS)
      t.strictSame(defaultPage.data, newestFirst, 'the default limit (20) holds all seven')
    })

    t.test('type filter', async (t) => {
      t.strictSame((await read(t, owner.apiKey, `${TRANSACTIONS}?type=refund`)).data, newestFirst.filter((entry) => entry.type === 'refund'))
      t.equal((await read(t, owner.apiKey, `${TRANSACTIONS}?type=refund`)).data.length, 2)
      t.strictSame((await read(t, owner.apiKey, `${TRANSACTIONS}?type=credit,debit`)).data, newestFirst.filter((entry) => entry.type !== 'refund'))
      const { items } = await allPages(t, owner.apiKey, `${TRANSACTIONS}?type=debit&limit=1`, (p) => (p.next_cursor ? `${TRANSACTIONS}?type=debit&limit=1&cursor=${encodeURIComponent(p.next_cursor)}` : null))
      t.strictSame(items.map((entry) => entry.placement_id), [p2.placement_id, p1.placement_id], 'a filtered statement pages too')
    })

    t.test('another business sees only its own statement', async (t) => {
      const theirs = await read(t, stranger.apiKey, TRANSACTIONS)
      t.equal(theirs.data.length, 1)
      t.match(theirs.data[0], { type: 'credit', amount: 5000, balance_after: 5000, reference: 'seed' })
      t.notOk(theirs.data.some((entry: Resource) => newestFirst.some((mine) => mine.id === entry.id)))
    })

    t.test('each bad query value is a 400 naming it', async (t) => {
      const typeMessage = 'type must be one of credit, debit, refund'
      const limitMessage = 'limit must be an integer from 1 to 100'
      const cases: [string, string][] = [
        ['type=bogus', typeMessage],
        ['type=credit,', typeMessage],
        ['type=', typeMessage],
        ['limit=0', limitMessage],
        ['limit=101', limitMessage],
        ['limit=2.5', limitMessage],
        ['limit=many', limitMessage],
        ['cursor=garbage', 'cursor is not valid'],
        [`cursor=${Buffer.from(JSON.stringify({ id: -1 })).toString('base64url')}`, 'cursor is not valid'],
        [`cursor=${Buffer.from(JSON.stringify({ id: '5' })).toString('base64url')}`, 'cursor is not valid'],
        ['status=credit', "unknown query parameter 'status'"],
        ['type=credit&type=debit', 'type must be given once'],
      ]
      for (const [query, message] of cases) assertError(t, await get(owner.apiKey, `${TRANSACTIONS}?${query}`), { status: 400, path: TRANSACTIONS, message })
    })
  })

  t.test('balance_after stays exact under concurrent placements, refunds and credits', async (t) => {
    const owner = await account({ balance: 50_000 })
    const first = await place(t, owner.apiKey, [shipment(), shipment(), shipment(), shipment()])
    await Promise.all([
      ...Array.from({ length: 8 }, () => gateway.inject({ method: 'POST', url: PLACE, headers: bearer(owner.apiKey), payload: [shipment()] })),
      ...first.orders.map((order) => cancel(t, owner.apiKey, order.order_id)),
      ...Array.from({ length: 4 }, (_, i) => credit(owner.businessId, 10.01 * (i + 1), `parallel-${i}`)),
    ])
    const { items } = await allPages(t, owner.apiKey, `${TRANSACTIONS}?limit=5`, (p) => (p.next_cursor ? `${TRANSACTIONS}?limit=5&cursor=${encodeURIComponent(p.next_cursor)}` : null))
    t.equal(items.length, 1 + 1 + 8 + 4 + 4, 'seed, first debit, eight debits (the wallet covers them), four refunds, four credits')
    t.equal(replay(t, [...items].reverse()), await balanceOf(owner.businessId), 'the statement replays to the balance')
  })

  t.test('GET /events: every change, gapless, in sequence order, each carrying the order at its version', async (t) => {
    const owner = await account({ balance: 100_000 })
    const stranger = await account({ balance: 100_000, name: 'Stranger Ltd' })
    // The order as the business read it after each change, by id and version.
    const snapshots = new Map<string, Resource>()
    const snap = async (orderId: string) => {
      const order = await read(t, owner.apiKey, `/v2/business/orders/${orderId}`)
      snapshots.set(`${order.order_id}@${order.version}`, withoutCancellation(order))
    }
    const expected: [string, string][] = []
    const did = async (orderId: string, type: string, change: () => Promise<unknown>) => {
      await change()
      expected.push([type, orderId])
      await snap(orderId)
    }

    const p1 = await place(t, owner.apiKey, [shipment(), shipment({ weight: 3 }), shipment({ weight: 4 })])
    const [o0, o1, o2] = p1.orders.map((order) => order.order_id) as [string, string, string]
    for (const id of [o0, o1, o2]) {
      expected.push(['order.created', id])
      await snap(id)
    }
    // Refused placements write no event and take no number.
    await placeRefused(t, owner.apiKey, Array.from({ length: 40 }, () => shipment()), 'Insufficient wallet balance')
    await placeRefused(t, owner.apiKey, [shipment(), shipment({ dropoff_latitude: KANO.lat, dropoff_longitude: KANO.lng })], 'One or more orders could not be placed')
    await did(o0, 'order.assigned', () => advance(t, o0, 'assigned'))
    await did(o0, 'order.picked_up', () => advance(t, o0, 'picked_up'))
    await did(o0, 'order.delivered', () => advance(t, o0, 'delivered'))
    await did(o1, 'order.assigned', () => advance(t, o1, 'assigned'))
    await did(o1, 'order.unassigned', () => advance(t, o1, 'created', 'courier fell ill'))
    await did(o1, 'order.cancelled', () => cancel(t, owner.apiKey, o1))
    await did(o2, 'order.cancelled', () => cancel(t, owner.apiKey, o2))
    // A second cancel changes nothing and writes nothing.
    await cancel(t, owner.apiKey, o2)
    const p2 = await place(t, owner.apiKey, [shipment()])
    const o3 = p2.orders[0]!.order_id
    expected.push(['order.created', o3])
    await snap(o3)
    await did(o3, 'order.assigned', () => advance(t, o3, 'assigned'))
    await did(o3, 'order.picked_up', () => advance(t, o3, 'picked_up'))
    await did(o3, 'order.failed', () => advance(t, o3, 'failed', 'recipient unreachable'))
    await did(o3, 'order.returned', () => advance(t, o3, 'returned'))
    const theirs = await place(t, stranger.apiKey, [shipment()])

    const listed = await read(t, owner.apiKey, EVENTS)
    t.equal(listed.has_more, false)
    t.strictSame(Object.keys(listed).sort(), ['data', 'has_more'])
    const events: Resource[] = listed.data
    t.strictSame(events.map((event) => event.sequence), Array.from({ length: expected.length }, (_, i) => i + 1), `sequences 1 to ${expected.length}, no gaps`)
    t.strictSame(events.map((event) => [event.type, event.data.order.order_id]), expected, 'one event per change, in the order they happened')

    for (const event of events) {
      const order = event.data.order
      const label = `#${event.sequence} ${event.type} ${order.order_id} v${order.version}`
      t.strictSame(Object.keys(event).sort(), ['created_at', 'data', 'id', 'livemode', 'sequence', 'type'], `${label}: the event's fields`)
      t.strictSame(Object.keys(event.data), ['order'])
      t.match(event.id, EVENT_ID)
      t.equal(event.livemode, true)
      t.match(event.created_at, ISO_UTC)
      t.strictSame(withoutCancellation(order), snapshots.get(`${order.order_id}@${order.version}`), `${label}: the order at that version, as the business read it`)
      t.equal(order.updated_at, event.created_at, `${label}: written by the change itself`)
      // Computed at the event's created_at (DESIGN.md 13.6).
      const preview = order.status === 'created' ? { cancellable: true, fee: 0, free_until: null }
        : order.status === 'assigned' ? { cancellable: true, fee: 0, free_until: plusSeconds(event.created_at, WINDOW_S) }
        : { cancellable: false, fee: null, free_until: null }
      t.strictSame(order.cancellation, preview, `${label}: cancellation as of the event`)
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}/${event.id}`), event, `${label}: GET /events/{id} reads the same`)
    }
    const versions = new Map<string, number>()
    for (const event of events) {
      const { order_id: id, version } = event.data.order
      t.equal(version, (versions.get(id) ?? 0) + 1, `${id}: versions rise by one along the sequence`)
      versions.set(id, version)
    }

    t.test('order.created is written by the placement, in its transaction, in the placement\'s order', async (t) => {
      const created = events.filter((event) => event.type === 'order.created')
      t.strictSame(created.map((event) => event.data.order.order_id), [o0, o1, o2, o3])
      t.ok(created.every((event) => event.data.order.version === 1 && event.data.order.status === 'created'))
      for (const placement of [p1, p2]) {
        const orderIds = placement.orders.map((order) => order.order_id)
        const writers = await sql<{ xmin: string }[]>`
          select xmin::text as xmin from events where type = 'order.created' and order_id = any(${orderIds}::text[])
          union select xmin::text from orders where placement_id = ${placement.placement_id} and version = 1
          union select xmin::text from ledger_entries where placement_id = ${placement.placement_id}
          union select xmin::text from placements where id = ${placement.placement_id}
          union select o.xmin::text from event_outbox o join events e
            on e.business_id = o.business_id and e.livemode = o.livemode and e.sequence between o.first_sequence and o.last_sequence
            where e.type = 'order.created' and e.order_id = any(${orderIds}::text[])`
        t.equal(writers.length, 1, `placement ${placement.placement_id}: orders, events, their outbox row, debit and placement row written by one transaction`)
        const outbox = await sql<{ first: number; last: number }[]>`
          select o.first_sequence::int as first, o.last_sequence::int as last from event_outbox o where exists (
            select 1 from events e where e.business_id = o.business_id and e.livemode = o.livemode and e.sequence between o.first_sequence and o.last_sequence
              and e.type = 'order.created' and e.order_id = any(${orderIds}::text[]))`
        const created = await sql<{ sequence: number }[]>`select sequence::int from events where type = 'order.created' and order_id = any(${orderIds}::text[]) order by sequence`
        t.strictSame([...outbox], [{ first: created[0]!.sequence, last: created.at(-1)!.sequence }],
          'the placement\'s events are on the relay\'s outbox as one row naming their range of sequence numbers (no sender runs here to take it off)')
      }
    })

    t.test('after, limit and has_more', async (t) => {
      const total = events.length
      for (const limit of [1, 4, 5, total]) {
        const { items, pages } = await allPages(t, owner.apiKey, `${EVENTS}?after=0&limit=${limit}`, (p) =>
          p.has_more ? `${EVENTS}?after=${p.data.at(-1)!.sequence}&limit=${limit}` : null)
        t.strictSame(items, events, `limit ${limit}: reading after the last sequence seen gets everything once`)
        t.equal(pages.length, Math.ceil(total / limit), `limit ${limit}: has_more is false on an exactly full last page`)
      }
      t.strictSame((await read(t, owner.apiKey, `${EVENTS}?after=${total - 2}`)).data.map((event: Resource) => event.sequence), [total - 1, total])
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}?after=${total}`), { data: [], has_more: false }, 'nothing after the last')
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}?after=100000`), { data: [], has_more: false })
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}?limit=3`), { data: events.slice(0, 3), has_more: true }, 'after defaults to 0')
    })

    t.test('type filter', async (t) => {
      const ofTypes = (...types: string[]) => events.filter((event) => types.includes(event.type))
      t.strictSame((await read(t, owner.apiKey, `${EVENTS}?type=order.created`)).data, ofTypes('order.created'))
      t.strictSame((await read(t, owner.apiKey, `${EVENTS}?type=order.cancelled,order.unassigned`)).data, ofTypes('order.cancelled', 'order.unassigned'))
      t.equal(ofTypes('order.cancelled', 'order.unassigned').length, 3)
      const created = ofTypes('order.created')
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}?type=order.created&after=${created[2]!.sequence}`), { data: [created[3]], has_more: false })
      t.strictSame(await read(t, owner.apiKey, `${EVENTS}?type=order.created&limit=2`), { data: created.slice(0, 2), has_more: true })
    })

    t.test('another business\'s events are invisible; its sequence is its own', async (t) => {
      const own = await read(t, stranger.apiKey, EVENTS)
      t.equal(own.data.length, 1)
      t.match(own.data[0], { sequence: 1, type: 'order.created', data: { order: { order_id: theirs.orders[0]!.order_id } } })
      for (const event of events) {
        const path = `${EVENTS}/${event.id}`
        assertError(t, await get(stranger.apiKey, path), { status: 404, path, message: `Event ${event.id} was not found` })
      }
      for (const id of ['evt_00000000000000000000', 'evt_nope', 'ORD-0000000000']) {
        assertError(t, await get(owner.apiKey, `${EVENTS}/${id}`), { status: 404, path: `${EVENTS}/${id}`, message: `Event ${id} was not found` })
      }
    })

    t.test('each bad query value is a 400 naming it', async (t) => {
      const afterMessage = `after must be an integer from 0 to ${Number.MAX_SAFE_INTEGER}`
      const limitMessage = 'limit must be an integer from 1 to 100'
      const typeMessage = `type must be one of ${EVENT_TYPES}`
      const cases: [string, string][] = [
        ['after=-1', afterMessage],
        ['after=abc', afterMessage],
        ['after=1.5', afterMessage],
        ['after=', afterMessage],
        ['after=99999999999999999999', afterMessage],
        ['limit=0', limitMessage],
        ['limit=101', limitMessage],
        ['limit=x', limitMessage],
        ['type=order.shipped', typeMessage],
        ['type=created', typeMessage],
        ['type=order.created,', typeMessage],
        ['cursor=abc', "unknown query parameter 'cursor'"],
        ['after=1&after=2', 'after must be given once'],
      ]
      for (const [query, message] of cases) assertError(t, await get(owner.apiKey, `${EVENTS}?${query}`), { status: 400, path: EVENTS, message })
    })
  })

  t.test('the default page is 20 events; a 22-order placement numbers its events in order', async (t) => {
    const owner = await account({ balance: 100_000 })
    const placed = await place(t, owner.apiKey, Array.from({ length: 22 }, () => shipment()))
    const first = await read(t, owner.apiKey, EVENTS)
    t.equal(first.data.length, 20)
    t.equal(first.has_more, true)
    const rest = await read(t, owner.apiKey, `${EVENTS}?after=20`)
    t.equal(rest.has_more, false)
    const all: Resource[] = [...first.data, ...rest.data]
    t.strictSame(all.map((event) => event.sequence), Array.from({ length: 22 }, (_, i) => i + 1))
    t.strictSame(all.map((event) => event.data.order.order_id), placed.orders.map((order) => order.order_id), 'sequence follows orders[i]')
    t.equal(new Set(all.map((event) => event.id)).size, 22, 'each event its own id')
    const writers = await sql<{ xmin: string }[]>`
      select xmin::text as xmin from events where business_id = ${owner.businessId}
      union select xmin::text from orders where placement_id = ${placed.placement_id}
      union select xmin::text from ledger_entries where placement_id = ${placed.placement_id}
      union select xmin::text from placements where id = ${placed.placement_id}
      union select xmin::text from event_sequences where business_id = ${owner.businessId}`
    t.equal(writers.length, 1, 'the orders, their events, the counter, the debit and the placement row: one transaction')
  })

  t.test('concurrent placements and changes still number events without gaps or repeats', async (t) => {
    const owner = await account({ balance: 200_000 })
    const placements = await Promise.all(Array.from({ length: 6 }, () => place(t, owner.apiKey, [shipment(), shipment()])))
    const ids = placements.flatMap((placed) => placed.orders.map((order) => order.order_id))
    await Promise.all([
      ...ids.slice(0, 4).map((id) => cancel(t, owner.apiKey, id)),
      ...ids.slice(4, 8).map((id) => advance(t, id, 'assigned')),
      placeRefused(t, owner.apiKey, [shipment({ dropoff_latitude: KANO.lat, dropoff_longitude: KANO.lng })], 'One or more orders could not be placed'),
      place(t, owner.apiKey, [shipment()]),
    ])
    const { data: events, has_more: hasMore } = await read(t, owner.apiKey, `${EVENTS}?limit=100`)
    t.equal(hasMore, false)
    t.strictSame(events.map((event: Resource) => event.sequence), Array.from({ length: 13 + 8 }, (_, i) => i + 1), '13 created, 4 cancelled, 4 assigned: 1 to 21')
    const byOrder = new Map<string, string[]>()
    for (const event of events as Resource[]) byOrder.set(event.data.order.order_id, [...(byOrder.get(event.data.order.order_id) ?? []), event.type])
    for (const id of ids.slice(0, 4)) t.strictSame(byOrder.get(id), ['order.created', 'order.cancelled'])
    for (const id of ids.slice(4, 8)) t.strictSame(byOrder.get(id), ['order.created', 'order.assigned'])
    for (const id of ids.slice(8)) t.strictSame(byOrder.get(id), ['order.created'])
  })

  t.test('every wallet of this file equals its ledger (credits − debits + refunds)', async (t) => {
    await assertLedgersOf(t, sql, businesses)
    await checkStatements(t, sql, businesses)
  })
})

/** Replays a statement oldest first: each balance_after is the one before plus the signed amount. Returns the last, in kobo. */
function replay(t: Test, oldestFirst: Resource[]): number {
  let balance = 0
  for (const entry of oldestFirst) {
    t.ok(entry.amount > 0, `${entry.id}: amount ${entry.amount} is positive`)
    balance += (entry.type === 'debit' ? -1 : 1) * kobo(entry.amount)
    t.equal(kobo(entry.balance_after), balance, `${entry.id} (${entry.type} ${entry.amount}): balance_after ${entry.balance_after}`)
  }
  return balance
}

/** In the database too: every entry's balance_after is the running sum in id order. */
async function checkStatements(t: Test, sql: Sql, businesses: string[]) {
  const broken = await sql`
    select id, business_id, balance_after, running from (
      select id, business_id, balance_after,
             sum(case kind when 'debit' then -amount else amount end) over (partition by business_id order by id) as running
      from ledger_entries where business_id = any(${businesses}::uuid[])) s
    where balance_after <> running`
  t.strictSame(broken.length, 0, `balance_after is the running sum of every entry: ${JSON.stringify(broken)}`)
}

