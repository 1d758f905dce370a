import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { publicBaseUrl as publicBaseUrlOf, type GatewayConfig } from '../../shared/config.js'
import { findLiveTokenHashes } from '../../shared/db/couriers.js'
import { createReadSql, createSql, endReadSql } from '../../shared/db/sql.js'
import healthRoutes from '../../shared/http/health.js'
import handlerDeadline from '../../shared/http/handler-deadline.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { fastifyOtel, tracingActive } from '../../shared/telemetry/fastify.js'
import { listenForInvalidations } from '../../shared/invalidation.js'
import { createRedis } from '../../shared/redis.js'
import { createPhotoStore, photoLinks } from '../../shared/storage/photos.js'
import { createAuthFailureLimit } from './auth-failures.js'
import { documentedScopes } from './access.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { createKeyCache, requireKey, requireScope } from './auth.js'
import { createCourierTokenCache, requireCourier } from './courier-auth.js'
import { createCourierStreams } from './courier-streams.js'
import courierRoutes from './routes/courier.js'
import { businessPhotoRoutes, photoLinkRoutes } from './routes/proof-photos.js'
import { createDispatchQueue } from '../../shared/dispatch/queue.js'
import { installErrorBody } from './errors.js'
import { operations } from './openapi/operations.js'
import { createPlacementQueue } from './placement-queue.js'
import { answerHeaders } from './server-options.js'
import { createPricingClient } from './pricing-client.js'
import { limitRequests } from './rate-limit.js'
import eventRoutes from './routes/events.js'
import openApiRoutes from './routes/openapi.js'
import orderRoutes from './routes/orders.js'
import placementRoutes from './routes/placement.js'
import quoteRoutes from './routes/quote.js'
import rateCardRoutes from './routes/rate-cards.js'
import sandboxRoutes from './routes/sandbox.js'
import walletRoutes from './routes/wallet.js'
import webhookEndpointRoutes from './routes/webhook-endpoints.js'
import { createWebhookQueue } from '../../shared/webhooks/producer.js'
import { createSecretBox } from '../../shared/webhooks/secret-box.js'

export interface GatewayOptions {
  config: GatewayConfig
}

/**
 * The public API as one plugin. It opens its own clients and closes them in `onClose`, so
 * `main` only listens and a test builds exactly what production runs.
 */
async function gatewayApp(app: FastifyInstance, { config }: GatewayOptions) {
  if (tracingActive()) await app.register((await fastifyOtel()).plugin())
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  await app.register(handlerDeadline, { timeoutMs: config.REQUEST_TIMEOUT_MS })
  installErrorBody(app, config.BODY_LIMIT_BYTES)
  // JSON is the only body this API takes; anything else is a 415.
  app.removeContentTypeParser('text/plain')
  // `Content-Type: application/json` with an empty body is no body, as many clients send it on a
  // body-less POST or DELETE (cancel, pickup, rotate-secret): a route that needs one says what.
  // `__proto__` and `constructor` keys are removed, as any unknown field is ignored (DESIGN 2), never refused as bad JSON.
  const parseJson = app.getDefaultJsonParser('remove', 'remove')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // JSON is UTF-8 (RFC 8259): a body declared in another charset would be read as something else.
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset && !/^utf-?8$/i.test(charset)) return done(new ApiError(415, 'Content-Type must be application/json, in UTF-8'), undefined)
    const text = body.toString()
    if (text === '') return done(null, undefined)
    return parseJson(request, text, done)
  })

  const sql = createSql(config, { timeouts: config })
  // Lists and the events backfill read here: a replica when DATABASE_READ_URL is set (DESIGN 16).
  const reads = createReadSql(config, sql, { timeouts: config })
  // Auto-pipelined: the commands of the requests one turn of the event loop reads (location
  // pings, rate-limit counts) leave in one write, which measured 10–20 % more pings a core.
  const redis = createRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS, enableAutoPipelining: true })
  redis.on('error', (err) => app.log.debug({ err }, 'redis connection error'))
  const pricing = createPricingClient(config.PRICING_URL, { connections: config.PRICING_CONNECTIONS, timeoutMs: config.PRICING_TIMEOUT_MS, token: config.INTERNAL_TOKEN })
  const keys = createKeyCache(sql, config.API_KEY_CACHE_TTL_S * 1000)
  const failures = createAuthFailureLimit(redis, { limit: config.AUTH_FAILURE_LIMIT, prefix: config.QUEUE_PREFIX })
  const courierTokens = createCourierTokenCache(sql, config.API_KEY_CACHE_TTL_S * 1000)
  const streams = createCourierStreams(config, app.log)
  const invalidations = listenForInvalidations(config, {
    onMessage: (message) => {
      if (message.kind === 'api-key') keys.clear()
      // Only what changed: a disable or a new phone does not send every online courier to Postgres.
      if (message.kind === 'courier-token') {
        courierTokens.drop(message.tokenHashes)
        streams.revoke(message.tokenHashes)
      }
      if (message.kind === 'courier') courierTokens.dropWhere((courier) => courier.id === message.courierId)
    },
    // Messages sent while the channel was away are lost: every cached credential goes, and each
    // open stream's token is checked again, so a revocation missed meanwhile still ends its stream.
    onReset: () => {
      keys.clear()
      courierTokens.clear()
      streams.recheck((tokenHashes) => findLiveTokenHashes(sql, tokenHashes)).catch((err: unknown) => app.log.warn({ err }, 'courier streams not checked again after the invalidation channel came back'))
    },
  })
  const dispatch = createDispatchQueue(config, app.log)

  const publicBaseUrl = publicBaseUrlOf(config)
  const photos = createPhotoStore(config)
  // Signed with the deployment's first secret key (WEBHOOK_SECRET_KEYS, never empty), for this purpose only.
  const [signing] = config.WEBHOOK_SECRET_KEYS
  if (!signing) throw new Error('WEBHOOK_SECRET_KEYS holds no key')
  const links = photoLinks(signing.key)

  const placements = createPlacementQueue(config, sql, app.log)
  const webhooks = createWebhookQueue(config, app.log)

  // Hooks run in reverse order on close: waiting placements are answered before the pool goes.
  app.addHook('onClose', async () => {
    await placements.close()
    await webhooks.close()
    await dispatch.close()
    streams.close()
    await invalidations.close()
    await pricing.close()
    redis.disconnect()
    await endReadSql(reads, sql)
    await sql.end({ timeout: 5 })
  })

  // A callback hook, not an async one: no promise and no extra microtask per request.
  const setAnswerHeaders = answerHeaders(config)
  app.addHook('onRequest', (request, reply, done) => {
    setAnswerHeaders(request, reply)
    done()
  })

  await app.register(healthRoutes, { sql, reads, redis, needsRedis: false })
  await app.register(openApiRoutes, { publicBaseUrl })
  // Delivery photos' signed links: no key, the link is the permission until it expires.
  await app.register(photoLinkRoutes, { photos, links, prefix: '/v2/proof-photos' })
  await app.register(async (v2) => {
    // Each route takes the scopes its operation in the document names, and the hook checks the
    // key's against them: what /docs says is what is enforced. A route the document lacks stops start-up.
    const scopes = documentedScopes(operations)
    v2.addHook('onRoute', (route) => {
      const key = `${route.method === 'HEAD' ? 'GET' : String(route.method)} ${route.url}`
      const taken = scopes.get(key)
      if (!taken) throw new Error(`${key} is not in the OpenAPI document (services/gateway/openapi/operations.ts)`)
      route.config = { ...route.config, scopes: taken }
    })
    v2.addHook('onRequest', requireKey({ keys, failures }))
    await limitRequests(v2, config, redis, (request) => request.caller?.keyId ?? request.ip)
    // Each route's own hook, after the limit's (which is each route's too): a call its scope
    // refuses is counted against the key's budget like any other.
    v2.addHook('onRoute', (route) => {
      route.onRequest = [...(route.onRequest === undefined ? [] : [route.onRequest].flat()), requireScope]
    })
    await v2.register(quoteRoutes, { pricing })
    await v2.register(rateCardRoutes, { pricing })
    await v2.register(placementRoutes, { sql, placements, idempotencyTtlHours: config.IDEMPOTENCY_TTL_H })
    await v2.register(orderRoutes, { sql, reads, redis, queuePrefix: config.QUEUE_PREFIX, dispatch })
    await v2.register(businessPhotoRoutes, { sql, photos, links, publicBaseUrl, ttlS: config.PHOTO_LINK_TTL_S })
    await v2.register(sandboxRoutes, { sql })
    await v2.register(walletRoutes, { sql, reads })
    await v2.register(eventRoutes, { sql, reads, webhooks: webhooks.queue })
    await v2.register(webhookEndpointRoutes, { sql, reads, rules: { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE }, secrets: createSecretBox(config.WEBHOOK_SECRET_KEYS) })
  }, { prefix: '/v2' })
  // The courier API: courier tokens only, never a business key (DESIGN 14, 17.1).
  await app.register(async (couriers) => {
    couriers.addHook('onRequest', requireCourier({ tokens: courierTokens, failures }))
    // Per courier (DESIGN 17.1); location pings have their own one-a-second gate instead.
    await limitRequests(couriers, config, redis, (request) => `courier:${request.courier.id}`)
    await couriers.register(courierRoutes, { sql, redis, queuePrefix: config.QUEUE_PREFIX, dispatch, streams, photos, publicBaseUrl })
  }, { prefix: '/v2/courier' })
}

export default fp(gatewayApp, { name: 'gateway' })
