import type { FastifyError, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { PricingConfig } from '../../shared/config.js'
import { getPlatformRates } from '../../shared/db/platform-rates.js'
import { loadRateCardForBusiness } from '../../shared/db/rate-cards.js'
import { createSql, isConnectionError, isTimeoutError, type Sql } from '../../shared/db/sql.js'
import { PricingError } from '../../shared/errors/pricing-error.js'
import { ValidationError } from '../../shared/errors/validation-error.js'
import { createGeocoder } from '../../shared/geo/geocoder.js'
import healthRoutes from '../../shared/http/health.js'
import { requestMetrics } from '../../shared/http/observability.js'
import { fastifyOtel, tracingActive } from '../../shared/telemetry/fastify.js'
import { listenForInvalidations } from '../../shared/invalidation.js'
import { createRedis } from '../../shared/redis.js'
import { createDistanceProvider } from '../../shared/pricing/distance.js'
import { createQuoter } from '../../shared/pricing/quoter.js'
import catalogRoutes from './routes/catalog.js'
import quoteRoutes from './routes/quote.js'

export interface PricingAppOptions {
  config: PricingConfig
  /** A pool the caller owns (tests share theirs); without it the app opens and closes its own. */
  sql?: Sql
}

/**
 * The internal pricing API as one plugin: the gateway is its only caller, so answers are bare
 * `{message}` 400s that the gateway wraps in the public error body.
 */
async function pricingApp(app: FastifyInstance, { config, sql: given }: PricingAppOptions) {
  if (tracingActive()) await app.register(fastifyOtel.plugin())
  await app.register(requestMetrics)
  const sql = given ?? createSql(config, { timeouts: config })
  const redis = createRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
  redis.on('error', (err) => app.log.debug({ err }, 'redis connection error'))
  const tools = { geocoder: createGeocoder(config, sql), distance: createDistanceProvider(config), currency: config.CURRENCY }
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
    if (!given) await sql.end({ timeout: 5 })
  })

  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (err instanceof PricingError) return reply.code(400).send({ message: err.message })
    if (err instanceof ValidationError) return reply.code(400).send({ message: err.message, errors: err.errors })
    if (isConnectionError(err) || isTimeoutError(err)) {
      request.log.warn({ err }, 'database unreachable')
      return reply.code(503).send({ message: 'Pricing is temporarily unavailable' })
    }
    if (err.statusCode && err.statusCode < 500) return reply.code(err.statusCode).send({ message: err.message })
    request.log.error({ err }, 'pricing failed')
    return reply.code(500).send({ message: 'Internal server error' })
  })

  await app.register(healthRoutes, { sql, redis })
  await app.register(quoteRoutes, { quoter })
  await app.register(catalogRoutes, { quoter })
}

export default fp(pricingApp, { name: 'pricing' })
