import t from 'tap'
import type { OrderEventType } from '../../../shared/courier.js'
import { appendEvents, listEvents } from '../../../shared/db/events.js'
import { newEventId } from '../../../shared/ids.js'
import { seedAccount } from '../../helpers/accounts.js'
import { genericPlanOf, useTestDb } from '../../helpers/db.js'

// GET /v2/business/events?type=… (shared/db/events.ts, migration 00029): a filter of types every
// order has is answered from the business's events in sequence order, where a page is a few rows
// away; a filter of other types only is read through the index of those types, so a type that is
// rare or absent does not make the read walk every event of the business.

const COMMON: OrderEventType[] = ['order.created', 'order.assigned', 'order.picked_up', 'order.delivered']

t.test('events by type: right rows in sequence order, uncommon types read by their index', async (t) => {
  const { sql, config } = await useTestDb(t)
  const account = await seedAccount(sql, { card: null })
  const scope = { businessId: account.businessId, livemode: true }
  // 4000 events of the four common types, with one cancellation at 2500 and one failure at 3990.
  const types = Array.from({ length: 4000 }, (_, n): OrderEventType => (n + 1 === 2500 ? 'order.cancelled' : n + 1 === 3990 ? 'order.failed' : COMMON[n % 4]!))
  for (let start = 0; start < types.length; start += 1000) {
    await sql.begin((tx) => appendEvents(tx, scope, types.slice(start, start + 1000).map((type, n) => ({
      id: newEventId(), type, orderId: `ORD-${Math.floor((start + n) / 4)}`, orderVersion: 1, data: { order: { n: start + n } }, createdAt: new Date(),
    })), null))
  }
  await sql`analyze events`

  const list = (filter: { after?: number; types: OrderEventType[] | null; limit?: number }) =>
    listEvents(sql, scope, { after: filter.after ?? 0, types: filter.types, limit: filter.limit ?? 21 })
  t.same((await list({ types: ['order.cancelled'] })).map((event) => event.sequence), [2500], 'the one cancellation')
  t.same((await list({ types: ['order.failed', 'order.cancelled', 'order.returned'] })).map((event) => event.sequence), [2500, 3990], 'uncommon types together, in sequence order')
  t.same(await list({ types: ['order.failed'], after: 3990 }), [], 'none after the last')
  t.same(await list({ types: ['order.returned'] }), [], 'a type no event has')
  const mixed = await list({ types: ['order.delivered', 'order.cancelled'], after: 2490, limit: 4 })
  t.same(mixed.map((event) => [event.sequence, event.type]), [[2492, 'order.delivered'], [2496, 'order.delivered'], [2500, 'order.cancelled'], [2504, 'order.delivered']], 'common and uncommon together')
  t.equal((await list({ types: null, limit: 100 })).length, 100, 'no filter: a full page')

  const planOf = (types: OrderEventType[]) => genericPlanOf(t, config, (reads) => listEvents(reads, scope, { after: 0, types, limit: 21 }))
  // Each month's copy of the index is named after its columns by Postgres.
  const uncommonIndex = /"Index Name":"events_\d{4}_\d{2}_business_id_livemode_type_sequence_idx"/
  t.match(await planOf(['order.returned', 'order.failed']), uncommonIndex, 'uncommon types: read from the index of those types only')
  t.notMatch(await planOf(['order.delivered']), uncommonIndex, 'a common type: not in that index, read in sequence order, a page a few rows away')
})
