import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { PricingConfig } from '../../shared/config.js'
import { geocodeCacheTable } from '../../shared/db/geocode-cache.js'
import { getPlatformRates } from '../../shared/db/platform-rates.js'
import { loadRateCardForBusiness } from '../../shared/db/rate-cards.js'
import { createSql, isConnectionError, isTimeoutError } from '../../shared/db/sql.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { apiErrorBody, toApiError } from '../../shared/errors/error-body.js'
import { createGeocoder } from '../../shared/geo/geocoder.js'
import healthRoutes from '../../shared/http/health.js'
import { requireInternalToken } from '../../shared/http/internal-token.js'
import handlerDeadline from '../../shared/http/handler-deadline.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { fastifyOtel, tracingActive } from '../../shared/telemetry/fastify.js'
import { listenForInvalidations } from '../../shared/invalidation.js'
import { createRedis } from '../../shared/redis.js'
import { createDistanceProvider } from '../../shared/pricing/routing.js'
import { createQuoteStore } from '../../shared/pricing/quote-store.js'
import { createQuoter } from '../../shared/pricing/quoter.js'
import catalogRoutes from './routes/catalog.js'
import quoteRoutes from './routes/quote.js'

export interface PricingAppOptions {
  config: PricingConfig
}

/**
 * The internal pricing API as one plugin. Refusals use the API's error body; the gateway, its
 * only caller, relays their `message` and `errors` under its own public path.
 */
async function pricingApp(app: FastifyInstance, { config }: PricingAppOptions) {
  if (tracingActive()) await app.register((await fastifyOtel()).plugin())
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  await app.register(handlerDeadline, { timeoutMs: config.REQUEST_TIMEOUT_MS })
  const sql = createSql(config, { timeouts: config })
  // Quotes are held here: auto-pipelining sends the SETs of concurrent quotes together, and a
  // Redis that does not answer within the command timeout leaves the quote without an id.
  const redis = createRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, enableAutoPipelining: true, commandTimeout: 500 })
  redis.on('error', (err) => app.log.debug({ err }, 'redis connection error'))
  const tools = { geocoder: createGeocoder(config, geocodeCacheTable(sql, config.GEOCODE_CACHE_TTL_S)), distance: createDistanceProvider(config), serviceArea: config.SERVICE_AREA_BBOX, currency: config.CURRENCY }
  const quoter = createQuoter(
    { loadCardForBusiness: (businessId) => loadRateCardForBusiness(sql, businessId), loadPlatformRates: () => getPlatformRates(sql) },
    tools,
    config.RATE_CARD_CACHE_TTL_S * 1000,
  )
  const invalidations = listenForInvalidations(config, {
    onMessage: (message) => quoter.invalidate(message),
    onReset: () => quoter.reset(),
  })

  app.addHook('onClose', async () => {
    await invalidations.close()
    redis.disconnect()
    await sql.end({ timeout: 5 })
  })

  // The gateway's body and mapping (shared/errors/error-body.ts): the gateway relays `message`
  // and `errors` of a 400 and answers at its own public path.
  app.setErrorHandler((err: FastifyError, request, reply) => {
    let known = toApiError(err)
    if (!known && (isConnectionError(err) || isTimeoutError(err))) {
      request.log.warn({ err }, 'database unreachable')
      known = new ApiError(503, 'Pricing is temporarily unavailable')
    }
    // REQUEST_TIMEOUT_MS passed while the handler still waited (a silent geocoder, say): a 503, as the gateway's own.
    if (!known && err.code === 'FST_ERR_HANDLER_TIMEOUT') known = new ApiError(503, 'Pricing is temporarily unavailable')
    if (!known && err.statusCode && err.statusCode < 500) known = new ApiError(err.statusCode, err.message)
    if (!known) request.log.error({ err }, 'pricing failed')
    const answer = known ?? new ApiError(500, 'Internal server error')
    return reply.code(answer.statusCode).send(apiErrorBody(answer, request.url, request.id))
  })

  await app.register(healthRoutes, { sql, redis, needsRedis: false })
  // Health stays open for probes; everything else answers the gateway and the worker only.
  await app.register(async (internal) => {
    internal.addHook('onRequest', requireInternalToken(config.INTERNAL_TOKEN))
    await internal.register(quoteRoutes, { quoter, quotes: createQuoteStore(redis, config.QUEUE_PREFIX, config.QUOTE_SIGNING_KEY), quoteTtlS: config.QUOTE_TTL_S })
    await internal.register(catalogRoutes, { quoter })
  })
}

export default fp(pricingApp, { name: 'pricing' })
