import t from 'tap'
import type { OrderEventType } from '../../../shared/courier.js'
import { appendEvents } from '../../../shared/db/events.js'
import {
  deleteEndpoint, findDeliveriesToAttempt, findEndpoint, findEndpointById, insertEndpointWithin, insertRedeliveries,
  deleteDeletedEndpointDeliveries, deleteEmptiedEndpoints, listEndpoints, recordAttempts, relayEvents, rotateEndpointSecret,
} from '../../../shared/db/webhooks.js'
import { newEventId, newWebhookEndpointId, newWebhookSecret } from '../../../shared/ids.js'
import { purgeDeleted } from '../../../services/webhook-sender/relay.js'
import { seedAccount } from '../../helpers/accounts.js'
import { genericPlanOf, useTestDb } from '../../helpers/db.js'

// Deleting a webhook endpoint (shared/db/webhooks.ts, migration 00028): the DELETE marks the row,
// and from then on nothing reads, counts, relays to or delivers to it; the sender's sweep removes
// its deliveries and their log in batches, then the row. And every foreign key that cascades has
// an index on its column, so no delete scans a table per row it removes.

t.test('every cascading foreign key has an index that leads with its column', async (t) => {
  const { sql } = await useTestDb(t)
  const keys = await sql<{ name: string; table: string; column: string; indexed: boolean }[]>`
    select c.conname as name, c.conrelid::regclass::text as table, a.attname as column,
      exists (select 1 from pg_index i where i.indrelid = c.conrelid and i.indkey[0] = c.conkey[1]) as indexed
    from pg_constraint c
      join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
      join pg_class r on r.oid = c.conrelid
    where c.contype = 'f' and c.confdeltype = 'c' and r.relnamespace = current_schema()::regnamespace
      and c.conparentid = 0`
  t.ok(keys.length >= 3, `the cascading keys: ${keys.map((key) => key.name).join(', ')}`)
  for (const key of keys) t.ok(key.indexed, `${key.table}.${key.column} (${key.name}) is indexed`)
})

t.test('the relay looks up the endpoints of the appends\' owners only, not every business\'s', async (t) => {
  const { sql, config } = await useTestDb(t)
  const [owner, second, bystander] = [await seedAccount(sql, { card: null }), await seedAccount(sql, { card: null }), await seedAccount(sql, { card: null })]
  const endpointOf = async (businessId: string, eventTypes: OrderEventType[] | null, livemode = true) => (await sql.begin((tx) => insertEndpointWithin(tx,
    { id: newWebhookEndpointId(), businessId, livemode, url: 'https://example.com/hook', eventTypes, description: null, secret: newWebhookSecret() }, 10)))!.id
  const all = await endpointOf(owner.businessId, null)
  const cancelsOnly = await endpointOf(owner.businessId, ['order.cancelled'])
  const secondLive = await endpointOf(second.businessId, null)
  await endpointOf(second.businessId, null, false)
  await endpointOf(bystander.businessId, null)
  const event = (type: OrderEventType) => ({ id: newEventId(), type, orderId: 'ORD-0', orderVersion: 1, data: { order: {} }, createdAt: new Date() })
  const [created, cancelled, secondCreated] = [event('order.created'), event('order.cancelled'), event('order.created')]
  await sql.begin((tx) => appendEvents(tx, { businessId: owner.businessId, livemode: true }, [created, cancelled], null))
  await sql.begin((tx) => appendEvents(tx, { businessId: second.businessId, livemode: true }, [secondCreated], null))

  const steps: Awaited<ReturnType<typeof relayEvents>>[] = []
  const plan = await genericPlanOf(t, config, async (db) => { steps.push(await relayEvents(db, 100)) })
  const pairs = steps.flatMap((step) => step.deliveries).map((delivery) => `${delivery.eventId} ${delivery.endpointId}`).sort()
  t.same(pairs, [`${created.id} ${all}`, `${cancelled.id} ${all}`, `${cancelled.id} ${cancelsOnly}`, `${secondCreated.id} ${secondLive}`].sort(),
    'each event to its owner\'s endpoints of its mode that take its type, and to no other')
  t.match(plan, /"Relation Name":"webhook_endpoints"[^{}]*"Index Cond":"\(\(business_id = \w+\.business_id\)/, 'by the owner, on the business\'s index')
})

t.test('a deleted endpoint is gone at once for its owner and the sender, and its rows go in batches', async (t) => {
  const { sql } = await useTestDb(t)
  const account = await seedAccount(sql, { card: null })
  const scope = { businessId: account.businessId, livemode: true }
  const create = (url: string) => sql.begin((tx) => insertEndpointWithin(tx, { id: newWebhookEndpointId(), ...scope, url, eventTypes: null, description: null, secret: newWebhookSecret() }, 2))
  const doomed = (await create('https://example.com/doomed'))!
  const kept = (await create('https://example.com/kept'))!
  t.equal(await create('https://example.com/third'), null, 'two is this test\'s limit')

  const events = Array.from({ length: 5 }, (_, n) => ({ id: newEventId(), type: 'order.created' as const, orderId: `ORD-${n}`, orderVersion: 1, data: { order: { n } }, createdAt: new Date() }))
  await sql.begin((tx) => appendEvents(tx, scope, events, null))
  const { deliveries } = await relayEvents(sql, 100)
  t.equal(deliveries.length, 10, 'each event relayed to both endpoints')
  const doomedDeliveries = deliveries.filter((delivery) => delivery.endpointId === doomed.id)
  // Two attempts settled, three still open (pending), as an endpoint being deleted has.
  await recordAttempts(sql, doomedDeliveries.slice(0, 2).map((delivery) => ({
    deliveryId: delivery.id, endpointId: doomed.id, eventId: delivery.eventId, eventType: 'order.created', attempt: 1, status: 'succeeded' as const,
    responseStatus: 204, durationMs: 3, error: null, nextAttemptAt: null,
  })))

  t.equal(await deleteEndpoint(sql, doomed.id, { ...scope, livemode: false }), false, 'not from the other mode')
  t.equal(await deleteEndpoint(sql, doomed.id, scope), true, 'deleted')
  t.equal(await deleteEndpoint(sql, doomed.id, scope), false, 'a second delete finds nothing')
  t.same((await listEndpoints(sql, scope)).map((endpoint) => endpoint.id), [kept.id], 'the list holds the other endpoint only')
  t.equal(await findEndpoint(sql, doomed.id, scope), null, 'not found by its owner')
  t.equal(await findEndpointById(sql, doomed.id), null, 'nor by id (the console)')
  t.equal(await rotateEndpointSecret(sql, doomed.id, scope, newWebhookSecret(), new Date()), null, 'its secret cannot be rotated')
  const after = await create('https://example.com/after')
  t.ok(after, 'it leaves room for another endpoint')

  const read = await findDeliveriesToAttempt(sql, doomedDeliveries.map((delivery) => delivery.id))
  t.equal(read.length, 5, 'its deliveries are still there')
  t.ok(read.every((row) => row.endpoint === null && row.event !== null), 'but the sender reads them without an endpoint, so it skips them')
  t.same((await insertRedeliveries(sql, events[0]!.id)).map((delivery) => delivery.endpointId).sort(), [kept.id, after!.id].sort(), 'a redelivery goes to the others only')
  t.same(await insertRedeliveries(sql, events[0]!.id, doomed.id), [], 'not to it when named')
  const later = { id: newEventId(), type: 'order.cancelled' as const, orderId: 'ORD-0', orderVersion: 2, data: { order: { n: 0 } }, createdAt: new Date() }
  await sql.begin((tx) => appendEvents(tx, scope, [later], null))
  t.notOk((await relayEvents(sql, 100)).deliveries.some((delivery) => delivery.endpointId === doomed.id), 'a new event is not relayed to it')

  const rowsOf = async (endpointId: string) => ({
    endpoints: (await sql`select id from webhook_endpoints where id = ${endpointId}`).length,
    deliveries: (await sql`select id from webhook_deliveries where endpoint_id = ${endpointId}`).length,
    attempts: (await sql`select id from webhook_attempts where endpoint_id = ${endpointId}`).length,
  })
  const keptBefore = await rowsOf(kept.id)
  t.same(await rowsOf(doomed.id), { endpoints: 1, deliveries: 5, attempts: 2 }, 'its rows wait for the purge')
  t.equal(await deleteDeletedEndpointDeliveries(sql, 3), 3, 'a batch deletes up to its limit')
  await deleteEmptiedEndpoints(sql)
  t.match(await rowsOf(doomed.id), { endpoints: 1, deliveries: 2 }, 'three deliveries gone; the row stays while it has any')
  const [{ orphans }] = await sql<{ orphans: number }[]>`
    select count(*)::int as orphans from webhook_attempts a where endpoint_id = ${doomed.id} and not exists (select 1 from webhook_deliveries d where d.id = a.delivery_id)`
  t.equal(orphans, 0, 'each deleted delivery took its attempts along')
  t.equal(await deleteDeletedEndpointDeliveries(sql, 3), 2, 'the last two')
  await deleteEmptiedEndpoints(sql)
  t.same(await rowsOf(doomed.id), { endpoints: 0, deliveries: 0, attempts: 0 }, 'then the endpoint, with every delivery and attempt')
  t.same(await rowsOf(kept.id), keptBefore, 'the other endpoint keeps every row')
  t.equal(await deleteDeletedEndpointDeliveries(sql, 3), 0, 'nothing left to purge')

  // The sweep's loop: batches until one comes back short.
  const burst = Array.from({ length: 1500 }, (_, n) => ({ id: newEventId(), type: 'order.created' as const, orderId: `ORD-B${n}`, orderVersion: 1, data: { order: { n } }, createdAt: new Date() }))
  await sql.begin((tx) => appendEvents(tx, scope, burst, null))
  while ((await relayEvents(sql, 1000)).claimed > 0);
  const { deliveries: before } = await rowsOf(after!.id)
  t.ok(before > 1500, `the endpoint has ${before} deliveries`)
  t.equal(await deleteEndpoint(sql, after!.id, scope), true)
  t.equal(await purgeDeleted(sql), before, 'the sweep removes them all, over two batches')
  t.same(await rowsOf(after!.id), { endpoints: 0, deliveries: 0, attempts: 0 }, 'and the endpoint')
})
