import { z } from 'zod'
import { parseJsonAs } from './parse-json.js'
import type { CommonConfig } from './config.js'
import { createRedis, type RedisClient } from './redis.js'

/**
 * What changed in the database, announced over Redis pub/sub so every gateway and pricing
 * process drops its cached copy at once instead of waiting for a TTL.
 */
const invalidationSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('api-key'), keyHash: z.string().optional() }),
  z.object({ kind: z.literal('business'), businessId: z.string() }),
  z.object({ kind: z.literal('rate-card'), rateCardId: z.string() }),
  z.object({ kind: z.literal('platform-rates') }),
  // Tokens revoked (a disable): the gateways drop them and end their streams.
  z.object({ kind: z.literal('courier-token'), tokenHashes: z.array(z.string()) }),
  // The courier's row changed (a new phone): the gateways drop their cached copy; tokens and streams stay.
  z.object({ kind: z.literal('courier'), courierId: z.string() }),
])

export type Invalidation = z.infer<typeof invalidationSchema>

export function invalidationChannel(queuePrefix: string): string {
  return `${queuePrefix}:invalidate`
}

/** Publishes after the change committed; a lost message is covered by the caches' TTL. */
export async function publishInvalidation(redis: RedisClient, queuePrefix: string, message: Invalidation): Promise<void> {
  await redis.publish(invalidationChannel(queuePrefix), JSON.stringify(message))
}

export interface InvalidationListener {
  close(): Promise<void>
}

/**
 * Subscribes on a connection of its own (a subscribed ioredis connection can do nothing else).
 * `onReset` runs after every reconnect, since messages sent while disconnected are lost.
 */
export function listenForInvalidations(
  config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX'>,
  handlers: { onMessage: (message: Invalidation) => void; onReset: () => void },
): InvalidationListener {
  const subscriber = createRedis(config, { maxRetriesPerRequest: null, lazyConnect: false })
  const channel = invalidationChannel(config.QUEUE_PREFIX)
  let connectedBefore = false
  subscriber.on('error', () => {
    // Reconnects on its own; caches fall back to their TTL meanwhile.
  })
  subscriber.on('ready', () => {
    if (connectedBefore) handlers.onReset()
    connectedBefore = true
    subscriber.subscribe(channel).catch(() => {})
  })
  subscriber.on('message', (received, payload) => {
    if (received !== channel) return
    // A message this process cannot read (another version's, or garbled) drops every cached copy.
    const message = parseJsonAs(invalidationSchema, payload)
    if (message) handlers.onMessage(message)
    else handlers.onReset()
  })
  return {
    async close() {
      subscriber.disconnect()
    },
  }
}
