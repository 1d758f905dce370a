import { Queue } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyBaseLogger } from 'fastify'
import type { CommonConfig } from '../config.js'
import type { Sql } from '../db/sql.js'
import { PG } from '../db/sql.js'
import { findEvent } from '../db/events.js'
import type { OrderScope } from '../db/orders.js'
import { insertRedeliveries } from '../db/webhooks.js'
import { createRedis } from '../redis.js'
import { queueDeliveries, WEBHOOK_QUEUE, type WebhookJob } from './queue.js'
import { errorMessage } from '../errors/error-message.js'

/**
 * The producer for redeliveries (the gateway's API, the console's button). No offline queue: with Redis down `add` fails at
 * once, and the delivery rows already written are queued by the sender's sweep instead.
 */
export function createWebhookQueue(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX' | 'REDIS_COMMAND_TIMEOUT_MS'>, log: FastifyBaseLogger) {
  const connection = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
  connection.on('error', (err) => log.debug({ err: err.message }, 'webhook producer connection error'))
  const queue = new Queue<WebhookJob>(WEBHOOK_QUEUE, { connection, prefix: config.QUEUE_PREFIX, telemetry: new BullMQOtel({ tracerName: 'courier' }) })
  queue.on('error', (err) => log.debug({ err: err.message }, 'webhook queue error'))
  return {
    queue,
    async close() {
      await queue.close()
      connection.disconnect()
    },
  }
}

export type Redelivery = { kind: 'queued'; endpointIds: string[] } | { kind: 'not_found' }

/**
 * One more delivery of an event to every enabled endpoint that takes its type, or to `endpointId` only (docs/contracts.md
 * section 7). The rows are written first: should Redis refuse the jobs, the sender's sweep queues them.
 */
export async function redeliverEvent(sql: Sql, queue: Queue<WebhookJob>, scope: OrderScope, eventId: string, log: FastifyBaseLogger, endpointId: string | null = null): Promise<Redelivery> {
  const event = await findEvent(sql, eventId, scope)
  if (!event) return { kind: 'not_found' }
  // Two redeliveries at once may pick the same number: the second takes the next one.
  const deliveries = await insertRedeliveries(sql, event.id, endpointId).catch((err: { code?: string }) => {
    if (err.code === PG.uniqueViolation) return insertRedeliveries(sql, event.id, endpointId)
    throw err
  })
  await queueDeliveries(queue, deliveries).catch((err) => log.warn({ err: errorMessage(err) }, 'redelivery left to the sweep'))
  return { kind: 'queued', endpointIds: deliveries.map((delivery) => delivery.endpointId) }
}
