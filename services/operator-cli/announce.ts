import type { CommonConfig } from '../../shared/config.js'
import { createRedis, type RedisClient } from '../../shared/redis.js'
import { publishInvalidation, type Invalidation } from '../../shared/invalidation.js'
import { errorMessage } from '../../shared/errors/error-message.js'

function warn(message: string): void {
  process.stderr.write(`warning: ${message}\n`)
}

/**
 * A short-lived connection for one command: no offline queue and no reconnecting, so a
 * Redis that is down costs one failed connect, not a hung CLI.
 */
export async function connectRedis(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): Promise<RedisClient | null> {
  const redis = createRedis(config, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    retryStrategy: () => null,
  })
  redis.on('error', () => {
    // Reported once below; ioredis would otherwise print every failure itself.
  })
  try {
    await redis.connect()
    return redis
  } catch (err) {
    redis.disconnect()
    const where = config.REDIS_CLUSTER_NODES ? 'The Redis Cluster' : `Redis at ${config.REDIS_URL}`
    warn(`${where} is unreachable (${errorMessage(err)}); caches will refresh on their TTL`)
    return null
  }
}

/**
 * Publishes an invalidation after the change committed. The change stands whatever Redis
 * does: gateway and pricing caches expire on their own TTL when the message is lost.
 */
export async function announce(redis: RedisClient | null, queuePrefix: string, message: Invalidation): Promise<void> {
  if (!redis) return
  try {
    await publishInvalidation(redis, queuePrefix, message)
  } catch (err) {
    warn(`could not announce the ${message.kind} change (${errorMessage(err)}); caches will refresh on their TTL`)
  }
}
