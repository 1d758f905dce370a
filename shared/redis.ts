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
 * The error kinds (a reply's first word) with which a Redis that is there says it cannot serve
 * now: loading its data, a replica or a demoted primary (a failover), a cluster without a
 * quorum or mid-resharding, a primary gone from its replica, a script past its time limit,
 * memory full, writes stopped by a failed save (a full disk) or by too few replicas. They pass
 * when the failover, the script or the operator's fix does.
 */
const OUTAGE_REPLIES = new Set(['LOADING', 'READONLY', 'CLUSTERDOWN', 'TRYAGAIN', 'MASTERDOWN', 'BUSY', 'OOM', 'MISCONF', 'NOREPLICAS'])

/**
 * For a step that cannot do without Redis (a shift, a location ping): Redis out of reach (down,
 * or past `REDIS_COMMAND_TIMEOUT_MS`), or saying it cannot serve now (`OUTAGE_REPLIES`), is an
 * outage to wait out, a 503 as Postgres's is; any other error Redis answered (a script's) stays
 * what it is.
 */
export function unavailableWithoutRedis(err: unknown): never {
  if (err instanceof ReplyError && !isOutageReply(err)) throw err
  throw new ApiError(503, 'Service temporarily unavailable, retry shortly')
}

/** An outage reply, or a transaction discarded (EXECABORT) for one of its commands' (ioredis keeps those as `previousErrors`). */
function isOutageReply(err: unknown): boolean {
  // ioredis types ReplyError as `any`; it is an Error, which is what lets the compiler read it.
  if (!(err instanceof ReplyError) || !(err instanceof Error)) return false
  const previous = 'previousErrors' in err && Array.isArray(err.previousErrors) ? err.previousErrors : []
  return OUTAGE_REPLIES.has(err.message.split(' ', 1)[0] ?? '') || previous.some(isOutageReply)
}
