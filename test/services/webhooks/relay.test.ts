import { Queue } from 'bullmq'
import t from 'tap'
import { appendEvents } from '../../../shared/db/events.js'
import { insertEndpointWithin, relayEvents, type Delivery } from '../../../shared/db/webhooks.js'
import { newEventId, newWebhookEndpointId, newWebhookSecret } from '../../../shared/ids.js'
import { createRedis } from '../../../shared/redis.js'
import { queueDeliveries, WEBHOOK_QUEUE, type WebhookJob } from '../../../shared/webhooks/queue.js'
import { requeueMissing } from '../../../services/webhook-sender/relay.js'
import { seedAccount } from '../../helpers/accounts.js'
import { useTestDb } from '../../helpers/db.js'

// The sender's sweep of lost jobs (services/webhook-sender/relay.ts), against a queue no worker
// takes from: a delivery whose job is in Redis is left alone, one whose job is gone is queued again.

t.test('the sweep of lost delivery jobs', async (t) => {
  const { sql, config } = await useTestDb(t)
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, { connection, prefix: config.QUEUE_PREFIX })
  t.teardown(async () => {
    await queue.obliterate({ force: true })
    await queue.close()
    connection.disconnect()
  })

  /** `count` deliveries of a new business's endpoint, relayed, and overdue as the sweep sees them. */
  const overdueDeliveries = async (count: number): Promise<Delivery[]> => {
    const account = await seedAccount(sql, { card: null })
    const scope = { businessId: account.businessId, livemode: true }
    await sql.begin((tx) => insertEndpointWithin(tx, { id: newWebhookEndpointId(), ...scope, url: 'https://example.com/hook', eventTypes: null, description: null, secret: newWebhookSecret() }, 10))
    const events = Array.from({ length: count }, (_, n) => ({ id: newEventId(), type: 'order.created' as const, orderId: `ORD-${n}`, orderVersion: 1, data: { order: { n } }, createdAt: new Date() }))
    await sql.begin((tx) => appendEvents(tx, scope, events, null))
    const { deliveries } = await relayEvents(sql, 1000)
    const ids = deliveries.map((delivery) => delivery.id)
    await sql`update webhook_deliveries set next_attempt_at = now() - interval '1 hour', updated_at = now() - interval '1 hour' where id = any(${ids}::bigint[])`
    return deliveries
  }

  t.test('a backlog whose jobs are in place does not hide a lost job behind it', async (t) => {
    // A slow endpoint's backlog: more deliveries than a page, each waiting with its job in place.
    const backlog = await overdueDeliveries(12)
    await queueDeliveries(queue, backlog)
    // A newer delivery of another business whose job was lost.
    const [lost] = await overdueDeliveries(1)
    await sql`update webhook_deliveries set next_attempt_at = now() - interval '30 minutes' where id = ${lost!.id}`

    const first = await requeueMissing(sql, queue, 60, null, 5)
    t.same(first.requeued, [], 'the first page is the backlog, each with its job')
    t.ok(first.next, 'and the next sweep takes up after it')
    const second = await requeueMissing(sql, queue, 60, first.next, 5)
    const third = await requeueMissing(sql, queue, 60, second.next, 5)
    t.same([...second.requeued, ...third.requeued], [lost!.id], 'a later page reaches the lost one and queues it again')
    t.equal(third.next, null, 'the last page is short: the sweep after it starts from the oldest again')
    t.ok(await queue.getJob(`${lost!.eventId}:${lost!.endpointId}:0`), 'its job is back')
    const again = await requeueMissing(sql, queue, 60, null, 5)
    t.same(again.requeued, [], 'from the oldest again, nothing is missing')
  })
})
