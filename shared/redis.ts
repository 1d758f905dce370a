import { Cluster, Redis, ReplyError, type RedisOptions } from 'ioredis'
import type { CommonConfig } from './config.js'
import { ApiError } from './errors/api-error.js'

/** A single Redis or a Redis Cluster: BullMQ, the rate limiter and pub/sub take either. */
export type RedisClient = Redis | Cluster

type RedisSettings = Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>

/**
 * Opens a connection to the deployment's Redis: with `REDIS_CLUSTER_NODES` set, an ioredis
 * `Cluster` seeded with those nodes (the user, password and `rediss:` of `REDIS_URL` apply to
 * each); otherwise the one Redis at `REDIS_URL`. Every key of the deployment starts with the
 * `{…}` hash tag of `QUEUE_PREFIX`, so BullMQ's multi-key scripts and ours stay in one slot.
 * A subscriber made here is a Cluster too: classic pub/sub reaches every node of a cluster.
 */
export function createRedis(config: RedisSettings, options: RedisOptions = {}): RedisClient {
  if (!config.REDIS_CLUSTER_NODES) return new Redis(config.REDIS_URL, options)
  const url = new URL(config.REDIS_URL)
  const { enableOfflineQueue, lazyConnect, ...nodeOptions } = options
  // Only what is set, so ioredis's own defaults hold for the rest (its failover retries too:
  // 16 redirections, 100 ms apart).
  const credentials = {
    ...(url.username && { username: decodeURIComponent(url.username) }),
    ...(url.password && { password: decodeURIComponent(url.password) }),
    ...(url.protocol === 'rediss:' && { tls: {} }),
  }
  return new Cluster(config.REDIS_CLUSTER_NODES, {
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    ...(lazyConnect !== undefined && { lazyConnect }),
    redisOptions: { ...nodeOptions, ...credentials },
  })
}

/**
 * For a step that cannot do without Redis (a shift, a location ping): Redis out of reach (down,
 * or past `REDIS_COMMAND_TIMEOUT_MS`) is an outage to wait out, a 503 as Postgres's is; an error
 * Redis answered (a script's) stays what it is.
 */
export function unavailableWithoutRedis(err: unknown): never {
  if (err instanceof ReplyError) throw err
  throw new ApiError(503, 'Service temporarily unavailable, retry shortly')
}
