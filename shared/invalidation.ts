import type { CommonConfig } from './config.js'
import { createRedis, type RedisClient } from './redis.js'

/**
 * What changed in the database, announced over Redis pub/sub so every gateway and pricing
 * process drops its cached copy at once instead of waiting for a TTL.
 */
export type Invalidation =
  | { kind: 'api-key'; keyHash?: string }
  | { kind: 'business'; businessId: string }
  | { kind: 'rate-card'; rateCardId: string }
  | { kind: 'platform-rates' }
  | { kind: 'courier-token'; tokenHashes: string[] }

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
    try {
      handlers.onMessage(JSON.parse(payload) as Invalidation)
    } catch {
      handlers.onReset()
    }
  })
  return {
    async close() {
      subscriber.disconnect()
    },
  }
}
