import type { CommonConfig } from '../../shared/config.js'
import { createRedis, type RedisClient } from '../../shared/redis.js'
import { publishInvalidation, type Invalidation } from '../../shared/invalidation.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { withDeadline } from '../../shared/deadline.js'

function warn(message: string): void {
  process.stderr.write(`warning: ${message}\n`)
}

/** How long the CLI waits for Redis to be ready: it tells the other services after its change committed. */
const READY_MS = 3000

/**
 * A short-lived connection for one command: no offline queue and no reconnecting, so a
 * Redis that is down costs one failed connect, not a hung CLI. One that accepts the connection
 * and never answers (frozen, or the wrong port) is given up after READY_MS, and each command
 * after REDIS_COMMAND_TIMEOUT_MS.
 */
export async function connectRedis(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'REDIS_COMMAND_TIMEOUT_MS'>): Promise<RedisClient | null> {
  const redis = createRedis(config, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: () => null,
  })
  redis.on('error', () => {
    // Reported once below; ioredis would otherwise print every failure itself.
  })
  try {
    await withDeadline(redis.connect(), READY_MS)
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
