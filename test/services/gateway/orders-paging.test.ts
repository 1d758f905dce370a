import t from 'tap'
import { insertOrders, type OrderLine } from '../../../shared/db/orders.js'
import { createPendingPlacement, settlePlacement } from '../../../shared/db/placements.js'
import { newOrderId, newUuid } from '../../../shared/ids.js'
import { seedAccount, type SeededAccount } from '../../helpers/accounts.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// DESIGN section 8: `GET /v2/business/orders` pages newest first with a keyset on
// (created_at, order_id), never OFFSET, so a listing stays exact while orders arrive. The
// 10 000 orders are inserted straight through the repository (placing them one by one would
// take minutes); most of them share a creation time with hundreds of others, so the order id
// has to break the ties.

const ORIGINALS = 10_000
const BATCH = 2_000
const PRICE = 350_000

interface Key { createdAt: number; id: string }
/** Newest first: a before b when a's time is later, or the same time and a's id is greater (byte order, as the C collation sorts). */
const newerThan = (a: Key, b: Key) => a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id)

t.test('Listing 10 000 orders page by page returns each once, newest first, while new orders arrive', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const { sql } = db
  const account = await seedAccount(sql, { card: null })
  const other = await seedAccount(sql, { card: null, name: 'Other Ltd' })

  /** One settled placement holding orders created at the given times (one insert per time); returns their keys. */
  const insertPlaced = async (owner: SeededAccount, times: number[]): Promise<Key[]> => {
    const placementId = newUuid()
    const orders = times.map((time, position): OrderLine & { createdAt: Date } => ({
      id: newOrderId(), position, price: PRICE, pricingModel: 'rate_card', vehicleType: 'bike', optionId: null, optionLabel: 'Up to 5 kg',
      deliveryMode: 'MOTORBIKE', distanceKm: 22.84, fromZoneName: 'Island', toZoneName: 'Ikeja', createdAt: new Date(time),
      pickupLat: 6.4413, pickupLng: 3.4714, dropoffLat: 6.6018, dropoffLng: 3.3515, deliveryPin: null, trackingUrl: null, trackingToken: null,
      shipment: { ...shipment({ recipient_name: `Recipient ${position}` }), pickup_address: '12 Admiralty Way, Lekki', pickup_state: 'Lagos' },
    }))
    await sql.begin(async (tx) => {
      await createPendingPlacement(tx, { id: placementId, businessId: owner.businessId, livemode: true, idempotencyKey: null, requestHash: placementId, shipmentsJson: '[]' })
      for (const time of new Set(times)) {
        const createdAt = new Date(time)
        const batch = { placementId, businessId: owner.businessId, livemode: true, currency: 'NGN', history: [{ status: 'created' as const, at: createdAt.toISOString() }], createdAt }
        await insertOrders(tx, batch, orders.filter((order) => order.createdAt.getTime() === time))
      }
      await settlePlacement(tx, placementId, 'succeeded', { kind: 'placed', currency: 'NGN', chargedTotal: PRICE * orders.length, orders: orders.map((order) => ({ orderId: order.id, price: PRICE })) })
    })
    return orders.map((order) => ({ createdAt: order.createdAt.getTime(), id: order.id }))
  }

  // 40 creation times a day ago: ten a millisecond apart, thirty a second apart, 250 orders on each.
  const base = Date.now() - 86_400_000
  const instants = Array.from({ length: 40 }, (_, k) => base + (k < 10 ? k : 10 + (k - 10) * 1000))
  const originals: Key[] = []
  for (let start = 0; start < ORIGINALS; start += BATCH) {
    originals.push(...(await insertPlaced(account, Array.from({ length: BATCH }, (_, i) => instants[(start + i) % instants.length]))))
  }
  // Another business's orders at the very same times.
  const strangers = await insertPlaced(other, Array.from({ length: 250 }, (_, i) => instants[i % instants.length]))
  const strangerIds = new Set(strangers.map((key) => key.id))
  t.equal(new Set(originals.map((key) => key.id)).size, ORIGINALS, `${ORIGINALS} orders inserted`)

  const list = async (owner: SeededAccount, query: string) => {
    const response = await gateway.inject({ method: 'GET', url: `/v2/business/orders?${query}`, headers: bearer(owner.apiKey) })
    if (response.statusCode !== 200) throw new Error(`GET /v2/business/orders?${query} answered ${response.statusCode}: ${response.body}`)
    return response.json() as { data: Record<string, any>[]; has_more: boolean; next_cursor: string | null }
  }

  t.test('every order once, strictly newest first, with orders arriving between pages', async (t) => {
    const seen: Key[] = []
    const counts = new Map<string, number>()
    // Arrivals ahead of the cursor (newer, or tied on time with a greater id) are never listed;
    // those behind it (older, or tied with a smaller id) must each be listed once.
    const ahead = new Set<string>()
    const behind = new Set<string>()
    const pageSizes: number[] = []
    let cursor: string | null = null
    let midCursor: { cursor: string; last: Key } | null = null
    for (let page = 0; ; page++) {
      const body = await list(account, `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
      pageSizes.push(body.data.length)
      for (const order of body.data) {
        seen.push({ createdAt: Date.parse(order.created_at), id: order.order_id })
        counts.set(order.order_id, (counts.get(order.order_id) ?? 0) + 1)
      }
      if (!body.has_more) {
        t.equal(body.next_cursor, null, 'the last page has no cursor')
        break
      }
      if (typeof body.next_cursor !== 'string') throw new Error(`page ${page} has more but no cursor`)
      cursor = body.next_cursor
      const last = seen.at(-1)!
      if (page === 40) midCursor = { cursor, last }

      // New orders arrive: two newer than anything, two tied with the page's last order, one older than all.
      const arrivals = await insertPlaced(account, [Date.now(), Date.now(), last.createdAt, last.createdAt, base - 3_600_000 - page])
      for (const key of arrivals) (newerThan(key, last) ? ahead : behind).add(key.id)
      if (page > 200) throw new Error('paging does not end')
    }

    t.ok(pageSizes.slice(0, -1).every((size) => size === 100), 'every page but the last is full')
    t.ok(pageSizes.at(-1)! >= 1 && pageSizes.at(-1)! <= 100, `the last page holds ${pageSizes.at(-1)}`)
    const twice = [...counts].filter(([, count]) => count > 1)
    t.same(twice, [], 'no order is listed twice')
    const missing = originals.filter((key) => counts.get(key.id) !== 1)
    t.same(missing.slice(0, 5), [], `each of the ${ORIGINALS} orders is listed exactly once (${missing.length} are not)`)
    const disorder = seen.findIndex((key, i) => i > 0 && !newerThan(seen[i - 1], key))
    t.equal(disorder, -1, disorder === -1 ? 'strictly newest first by (created_at, order_id)' : `out of order at ${disorder}: ${JSON.stringify(seen.slice(disorder - 1, disorder + 1))}`)
    t.ok(ahead.size > 0 && behind.size > 0, `${ahead.size} arrivals ahead of the cursor, ${behind.size} behind it`)
    t.same([...ahead].filter((id) => counts.has(id)), [], 'orders that arrived ahead of the cursor are not listed')
    t.same([...behind].filter((id) => counts.get(id) !== 1), [], 'orders that arrived behind the cursor are listed once')
    t.equal(seen.length, ORIGINALS + behind.size, 'nothing else is listed')
    t.same(seen.filter((key) => strangerIds.has(key.id)), [], 'no other business\'s order')

    t.test('another business sees only its own orders, even with this business\'s cursor', async (t) => {
      const theirs: string[] = []
      let next: string | null = null
      do {
        const body = await list(other, `limit=100${next ? `&cursor=${encodeURIComponent(next)}` : ''}`)
        theirs.push(...body.data.map((order) => order.order_id))
        next = body.next_cursor
      } while (next)
      t.same(theirs.slice().sort(), [...strangerIds].sort(), 'its 250 orders, once each')

      // A cursor is a position, not a permission: used by the other business it lists that business's older orders.
      const { cursor, last } = midCursor!
      const body = await list(other, `limit=100&cursor=${encodeURIComponent(cursor)}`)
      t.ok(body.data.length > 0, 'it lists something')
      t.ok(body.data.every((order) => strangerIds.has(order.order_id)), 'only its own orders')
      t.ok(body.data.every((order) => newerThan(last, { createdAt: Date.parse(order.created_at), id: order.order_id })), 'all behind the cursor')

      const [placement] = await sql`select placement_id from orders where id = ${originals[0].id}`
      t.same((await list(other, `placement_id=${placement.placementId}`)).data, [], 'filtering by this business\'s placement lists nothing')
      const read = await gateway.inject({ method: 'GET', url: `/v2/business/orders/${originals[0].id}`, headers: bearer(other.apiKey) })
      t.equal(read.statusCode, 404)
      t.equal(read.json().message, `Order ${originals[0].id} was not found`)
    })
  })
})
