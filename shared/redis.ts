import { createHash } from 'node:crypto'
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

/**
 * A Lua script run by its SHA-1 (EVALSHA), loaded on first use and again after a Redis restart
 * (NOSCRIPT): a hot path sends 40 bytes instead of the script on every call.
 */
export function luaScript(source: string) {
  const sha = createHash('sha1').update(source).digest('hex')
  return async (redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args)
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
      return redis.eval(source, keys.length, ...keys, ...args)
    }
  }
}
