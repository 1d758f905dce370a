import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import type { RedisClient } from '../../shared/redis.js'
import type { GatewayConfig } from '../../shared/config.js'
import { ApiError } from '../../shared/errors/api-error.js'

/**
 * Per-key limit with counters in Redis, so every gateway replica shares one budget. It fails
 * open: with Redis out of reach, quotes go on unlimited rather than failing. Registered after
 * authentication, so it counts keys, not addresses.
 */
export async function limitRequests(app: FastifyInstance, config: GatewayConfig, redis: RedisClient): Promise<void> {
  if (config.RATE_LIMIT_MAX === 0) return
  await app.register(rateLimit, {
    max: config.RATE_LIMIT_MAX,
    timeWindow: config.RATE_LIMIT_WINDOW_MS,
    redis,
    nameSpace: `${config.QUEUE_PREFIX}:rate-limit:`,
    skipOnError: true,
    enableDraftSpec: true,
    keyGenerator: (request) => request.caller?.keyId ?? request.ip,
    errorResponseBuilder: (_request, context) => new ApiError(429, `Too many requests, retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`),
  })
}
