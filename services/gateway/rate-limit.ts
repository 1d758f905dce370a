import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { RedisClient } from '../../shared/redis.js'
import type { GatewayConfig } from '../../shared/config.js'
import { ApiError } from '../../shared/errors/api-error.js'

/**
 * Per-caller limit with counters in Redis, so every gateway replica shares one budget: per API
 * key on the business routes, per courier on the courier routes (`keyOf`). It fails open: with
 * Redis out of reach, requests go on unlimited rather than failing. Registered after
 * authentication, so it counts callers, not addresses.
 */
export async function limitRequests(app: FastifyInstance, config: GatewayConfig, redis: RedisClient, keyOf: (request: FastifyRequest) => string): Promise<void> {
  if (config.RATE_LIMIT_MAX === 0) return
  await app.register(rateLimit, {
    max: config.RATE_LIMIT_MAX,
    timeWindow: config.RATE_LIMIT_WINDOW_MS,
    redis,
    nameSpace: `${config.QUEUE_PREFIX}:rate-limit:`,
    skipOnError: true,
    enableDraftSpec: true,
    keyGenerator: keyOf,
    errorResponseBuilder: (_request, context) => new ApiError(429, `Too many requests, retry in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds`),
  })
}
