import { Queue } from 'bullmq'
import { BullMQOtel } from 'bullmq-otel'
import type { FastifyBaseLogger } from 'fastify'
import type { GatewayConfig } from '../../shared/config.js'
import { createRedis } from '../../shared/redis.js'
import { WEBHOOK_QUEUE, type WebhookJob } from '../../shared/webhooks/queue.js'

/**
 * The gateway's producer for redeliveries. No offline queue: with Redis down `add` fails at
 * once, and the delivery rows already written are queued by the sender's sweep instead.
 */
export function createWebhookQueue(config: GatewayConfig, log: FastifyBaseLogger) {
  const connection = createRedis(config, { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
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
