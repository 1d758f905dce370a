import { Cluster, Redis, type RedisOptions } from 'ioredis'
import type { CommonConfig } from './config.js'

/** A single Redis or a Redis Cluster: BullMQ, the rate limiter and pub/sub take either. */
export type RedisClient = Redis | Cluster

/**
 * Opens a connection to the deployment's Redis. With `REDIS_CLUSTER=true` the URL names one
 * seed node of a cluster; every key of the service carries the `{…}` hash tag of
 * `QUEUE_PREFIX`, so BullMQ's multi-key scripts stay in one slot.
 */
export function createRedis(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER'>, options: RedisOptions = {}): RedisClient {
  if (!config.REDIS_CLUSTER) return new Redis(config.REDIS_URL, options)
  const url = new URL(config.REDIS_URL)
  const { enableOfflineQueue, lazyConnect, ...nodeOptions } = options
  return new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
    enableOfflineQueue,
    lazyConnect,
    redisOptions: {
      ...nodeOptions,
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      tls: url.protocol === 'rediss:' ? {} : undefined,
    },
  })
}
