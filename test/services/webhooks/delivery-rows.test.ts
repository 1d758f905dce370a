import t, { type Test } from 'tap'
import { appendEvents } from '../../../shared/db/events.js'
import { insertEndpointWithin, relayEvents, type AttemptRecord, type Delivery } from '../../../shared/db/webhooks.js'
import { newEventId, newWebhookEndpointId, newWebhookSecret } from '../../../shared/ids.js'
import { createDeliveryRows } from '../../../services/webhook-sender/delivery-rows.js'
import { seedAccount } from '../../helpers/accounts.js'
import { useTestDb } from '../../helpers/db.js'

// The sender's reads and writes of delivery rows (services/webhook-sender/delivery-rows.ts): what
// a burst asks for within a few milliseconds shares a statement, and every caller still gets its
// own answer, its own row written, and the endpoint's failure streak as one attempt at a time would.
// The rows are made with the unscaled rule (10 failed deliveries over 5 days); the days pass by
// moving the streak's start (`failing_since`) back in the database.

t.test('delivery rows, read and written in batches', async (t) => {
  const { sql } = await useTestDb(t)
  const rows = createDeliveryRows(sql, { retryScale: 1 })

  /** An endpoint of a new business with `count` deliveries relayed to it, and its failure count set. */
  const deliveriesTo = async (t: Test, count: number, consecutiveFailures = 0) => {
    const account = await seedAccount(sql, { card: null })
    const scope = { businessId: account.businessId, livemode: true }
    const endpoint = await sql.begin((tx) => insertEndpointWithin(tx, { id: newWebhookEndpointId(), ...scope, url: 'https://example.com/hook', eventTypes: null, description: null, secret: newWebhookSecret() }, 10))
    await sql`update webhook_endpoints set consecutive_failures = ${consecutiveFailures} where id = ${endpoint!.id}`
    const events = Array.from({ length: count }, (_, n) => ({ id: newEventId(), type: 'order.created' as const, orderId: `ORD-${n}`, orderVersion: 1, data: { order: { n } }, createdAt: new Date() }))
    await sql.begin((tx) => appendEvents(tx, scope, events, null))
    const { deliveries } = await relayEvents(sql, 1000)
    t.equal(deliveries.length, count, `${count} deliveries relayed`)
    return { endpointId: endpoint!.id, deliveries: deliveries.sort((a, b) => a.id - b.id) }
  }
  const attempt = (delivery: Delivery, status: AttemptRecord['status'], responseStatus: number | null = status === 'succeeded' ? 204 : 500): AttemptRecord => ({
    deliveryId: delivery.id, endpointId: delivery.endpointId, eventId: delivery.eventId, eventType: 'order.created', attempt: delivery.attempts + 1, status,
    responseStatus, durationMs: 3, error: status === 'succeeded' ? null : `the endpoint answered ${responseStatus}`,
    nextAttemptAt: status === 'retrying' ? new Date(Date.now() + 5000) : null,
  })
  const endpointRow = async (id: string) => (await sql`select status, disabled_reason, consecutive_failures from webhook_endpoints where id = ${id}`)[0]!
  /** When the endpoint's failure streak began, in epoch milliseconds; null when none runs. */
  const streakStart = async (id: string): Promise<number | null> =>
    ((await sql<{ failingSince: Date | null }[]>`select failing_since from webhook_endpoints where id = ${id}`)[0]!.failingSince?.getTime() ?? null)
  /** Sets the endpoint's streak as if it had run for so long: `failing_since` that far back. */
  const failingFor = (id: string, interval: string, consecutiveFailures?: number) =>
    sql`update webhook_endpoints set failing_since = now() - ${interval}::interval, consecutive_failures = coalesce(${consecutiveFailures ?? null}::int, consecutive_failures) where id = ${id}`
  const logOf = (endpointId: string) => sql`select delivery_id, attempt, status, at from webhook_attempts where endpoint_id = ${endpointId} order by id`

  t.test('a burst of reads: each gets its delivery, event and endpoint', async (t) => {
    const { endpointId, deliveries } = await deliveriesTo(t, 3)
    const found = await Promise.all([...deliveries.map((delivery) => rows.find(delivery.id)), rows.find(-1)])
    t.same(found.map((row) => row?.delivery.id ?? null), [...deliveries.map((delivery) => delivery.id), null], 'in the order asked, null for no such delivery')
    t.ok(found.slice(0, 3).every((row) => row!.event!.id === row!.delivery.eventId && row!.endpoint!.id === endpointId && row!.endpoint!.url === 'https://example.com/hook'), 'with its event and endpoint')
    t.same(found[0]!.event!.data, { order: { n: 0 } }, 'the event as stored')
    await sql`delete from webhook_endpoints where id = ${endpointId}`
    t.equal(await rows.find(deliveries[0]!.id), null, 'a deleted endpoint takes its deliveries along')
  })

  t.test('succeeded and retrying attempts of a burst share one statement, and a success resets the failure count', async (t) => {
    const { endpointId, deliveries } = await deliveriesTo(t, 4, 3)
    const statuses = ['succeeded', 'retrying', 'succeeded', 'retrying'] as const
    await Promise.all(deliveries.map((delivery, n) => rows.record(attempt(delivery, statuses[n]!), null)))
    const log = await logOf(endpointId)
    t.same(log.map((row) => [row.deliveryId, row.status]), deliveries.map((delivery, n) => [delivery.id, statuses[n]]), 'one log row per attempt, in the order they came')
    t.equal(new Set(log.map((row) => row.at.getTime())).size, 1, 'written by one statement (one transaction time)')
    const states = await sql`select id, status, attempts from webhook_deliveries where endpoint_id = ${endpointId} order by id`
    t.same(states.map((row) => [row.status, row.attempts]), statuses.map((status) => [status, 1]), 'each delivery in its new state')
    t.equal((await endpointRow(endpointId)).consecutiveFailures, 0, 'the failure count starts again')
    t.equal(await streakStart(endpointId), log.at(-1)!.at.getTime(), 'and the retry after the last success starts a streak then')
  })

  t.test('an attempt the batch cannot write fails alone', async (t) => {
    const { endpointId, deliveries } = await deliveriesTo(t, 3)
    await sql`delete from webhook_deliveries where id = ${deliveries[1]!.id}`
    const written = await Promise.allSettled(deliveries.map((delivery) => rows.record(attempt(delivery, 'succeeded'), null)))
    t.same(written.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled'], 'the attempt of the deleted delivery fails, the others are written')
    t.same((await logOf(endpointId)).map((row) => row.deliveryId).sort(), [deliveries[0]!.id, deliveries[2]!.id].sort(), 'their log rows')
  })

  t.test('ten failed deliveries in a row disable the endpoint only once it has been failing for 5 days; a 410 at once', async (t) => {
    const { endpointId, deliveries } = await deliveriesTo(t, 13, 0)
    await Promise.all(deliveries.slice(0, 10).map((delivery) => rows.record(attempt(delivery, 'failed'), null)))
    t.match(await endpointRow(endpointId), { status: 'enabled', disabledReason: null, consecutiveFailures: 10 }, 'ten failed at once: still enabled, the endpoint has failed for moments only')
    const young = await streakStart(endpointId)
    // Written at once, each in its own statement: whichever took the endpoint row first started the streak.
    t.ok((await logOf(endpointId)).some((row) => row.at.getTime() === young), 'one of them started the streak')

    await failingFor(endpointId, '4 days 23 hours')
    await rows.record(attempt(deliveries[10]!, 'failed'), null)
    t.match(await endpointRow(endpointId), { status: 'enabled', consecutiveFailures: 11 }, 'eleven failed over an hour short of 5 days: still enabled')

    await failingFor(endpointId, '5 days')
    await rows.record(attempt(deliveries[11]!, 'failed'), null)
    t.match(await endpointRow(endpointId), { status: 'disabled', disabledReason: '10 deliveries in a row failed over 5 days', consecutiveFailures: 12 }, 'the next failure once the streak spans 5 days disables it')

    const gone = await deliveriesTo(t, 2, 0)
    await rows.record(attempt(gone.deliveries[0]!, 'failed', 410), 'the endpoint answered 410 Gone')
    t.match(await endpointRow(gone.endpointId), { status: 'disabled', disabledReason: 'the endpoint answered 410 Gone', consecutiveFailures: 1 }, '410 disables at once')
    await failingFor(gone.endpointId, '6 days', 20)
    await rows.record(attempt(gone.deliveries[1]!, 'failed'), null)
    t.match(await endpointRow(gone.endpointId), { status: 'disabled', disabledReason: 'the endpoint answered 410 Gone' }, 'a disabled endpoint keeps the reason it was disabled for')
    // A POST in flight when the endpoint was disabled for its failures comes back 410.
    await rows.record(attempt(deliveries[12]!, 'failed', 410), 'the endpoint answered 410 Gone')
    t.match(await endpointRow(endpointId), { status: 'disabled', disabledReason: '10 deliveries in a row failed over 5 days' }, 'a 410 after the endpoint was disabled for its failures keeps that reason')
  })

  t.test('a retrying attempt starts the streak, a success ends it, and failures after a success are a new streak', async (t) => {
    const { endpointId, deliveries } = await deliveriesTo(t, 13, 0)
    await rows.record(attempt(deliveries[0]!, 'retrying'), null)
    const [first] = await logOf(endpointId)
    t.equal((await endpointRow(endpointId)).consecutiveFailures, 0, 'no delivery has failed')
    t.equal(await streakStart(endpointId), first!.at.getTime(), 'but the first attempt without a 2xx starts the streak')

    await failingFor(endpointId, '6 days', 9)
    const started = await streakStart(endpointId)
    await rows.record(attempt(deliveries[1]!, 'retrying'), null)
    t.match(await endpointRow(endpointId), { status: 'enabled', consecutiveFailures: 9 }, 'another retry counts no delivery')
    t.equal(await streakStart(endpointId), started, 'and leaves the start where it was')

    await rows.record(attempt(deliveries[2]!, 'succeeded'), null)
    t.match(await endpointRow(endpointId), { status: 'enabled', consecutiveFailures: 0 }, 'a success sets the count back')
    t.equal(await streakStart(endpointId), null, 'and ends the streak')

    await Promise.all(deliveries.slice(3).map((delivery) => rows.record(attempt(delivery, 'failed'), null)))
    t.match(await endpointRow(endpointId), { status: 'enabled', consecutiveFailures: 10 }, 'ten failed after the success: still enabled, the six days before it do not count')
    const restarted = await streakStart(endpointId)
    t.ok((await logOf(endpointId)).slice(3).some((row) => row.at.getTime() === restarted), 'the new streak began with one of them')

    const both = await deliveriesTo(t, 2, 4)
    await failingFor(both.endpointId, '6 days')
    await Promise.all([rows.record(attempt(both.deliveries[0]!, 'retrying'), null), rows.record(attempt(both.deliveries[1]!, 'succeeded'), null)])
    t.equal(new Set((await logOf(both.endpointId)).map((row) => row.at.getTime())).size, 1, 'a retry then a success, written in one statement')
    t.equal((await endpointRow(both.endpointId)).consecutiveFailures, 0, 'the count set back')
    t.equal(await streakStart(both.endpointId), null, 'and no streak')
  })
})
