import { createHmac } from 'node:crypto'
import { once } from 'node:events'
import { setTimeout } from 'node:timers/promises'
import cookie from '@fastify/cookie'
import csrf from '@fastify/csrf-protection'
import formbody from '@fastify/formbody'
import helmet from '@fastify/helmet'
import multipart from '@fastify/multipart'
import rateLimit from '@fastify/rate-limit'
import session from '@fastify/session'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ConsoleConfig } from '../../shared/config.js'
import { findConsoleUser, type ConsoleUser } from '../../shared/db/console-users.js'
import { deleteExpiredSessions } from '../../shared/db/console-sessions.js'
import { createReadSql, createSql, endReadSql, isConnectionError, isTimeoutError } from '../../shared/db/sql.js'
import trackingRoutes from './routes/tracking.js'
import healthRoutes from '../../shared/http/health.js'
import handlerDeadline from '../../shared/http/handler-deadline.js'
import { requestLog, requestMetrics } from '../../shared/http/observability.js'
import { publishInvalidation, type Invalidation } from '../../shared/invalidation.js'
import { createRedis } from '../../shared/redis.js'
import { repeatWithoutOverlap } from '../../shared/repeat.js'
import { RATE_CARD_FILE_MAX_BYTES } from '../../shared/pricing/rate-card-file.js'
import { fastifyOtel, tracingActive } from '../../shared/telemetry/fastify.js'
import { createWebhookQueue } from '../../shared/webhooks/producer.js'
import { html } from './html.js'
import { CONSOLE_CSS, type Frame } from './pages/layout.js'
import { csrfTokenFor, csrfUserOf, frameOf, sendPage } from './reply.js'
import authRoutes from './routes/auth.js'
import { CSRF_COOKIE } from './cookies.js'
import businessRoutes from './routes/business.js'
import operatorRoutes from './routes/operator.js'
import { postgresSessionStore } from './session-store.js'
import { helmetOptions, notFoundPage, servedLocally } from './server-options.js'
import courierAppRoutes from './routes/courier-app.js'
import { deleteExpiredCourierSessions } from '../../shared/db/courier-logins.js'
import { forgetSpentLoginFailures } from '../../shared/couriers/login.js'
import { createDispatchQueue } from '../../shared/dispatch/queue.js'
import { createPhotoStore } from '../../shared/storage/photos.js'
import type { ConsoleDeps } from './deps.js'
import { FormError } from './forms.js'

const SESSION_SWEEP_MS = 10 * 60 * 1000
const REDIS_READY_WAIT_MS = 2000

/**
 * The console (DESIGN 12) as one plugin: server-rendered pages over the shared domain modules,
 * sessions in Postgres, a CSRF token on every form. It calls no other service.
 */
async function consoleApp(app: FastifyInstance, { config }: { config: ConsoleConfig }) {
  if (tracingActive()) await app.register((await fastifyOtel()).plugin())
  await app.register(requestMetrics)
  await app.register(requestLog, { slowMs: config.SLOW_REQUEST_MS })
  await app.register(handlerDeadline, { timeoutMs: config.REQUEST_TIMEOUT_MS })

  const sql = createSql(config, { timeouts: config })
  const reads = createReadSql(config, sql, { timeouts: config })
  const redis = createRedis(config, { maxRetriesPerRequest: 1, enableOfflineQueue: false, commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS })
  redis.on('error', (err) => app.log.debug({ err }, 'redis connection error'))
  // The login limit counts in Redis: give the connection a moment before the first request, but
  // start without it (the limit fails open) rather than not at all.
  app.addHook('onReady', async () => {
    if (redis.status !== 'ready') await Promise.race([once(redis, 'ready').catch(() => undefined), setTimeout(REDIS_READY_WAIT_MS, undefined, { ref: false })])
  })
  const webhooks = createWebhookQueue(config, app.log)
  // The courier web app's steps ask dispatch to look again (DESIGN 14) and keep delivery photos.
  const dispatch = createDispatchQueue(config, app.log)
  const photos = createPhotoStore(config)
  const sweep = repeatWithoutOverlap(SESSION_SWEEP_MS, async () => {
    await deleteExpiredSessions(sql)
    await deleteExpiredCourierSessions(sql)
    await forgetSpentLoginFailures(sql)
  }, (err) => app.log.warn({ err }, 'session sweep failed'))
  app.addHook('onClose', async () => {
    clearInterval(sweep)
    await webhooks.close()
    await dispatch.close()
    redis.disconnect()
    await endReadSql(reads, sql)
    await sql.end({ timeout: 5 })
  })
  // Gateways and pricing hear of console changes as they do of the CLI's (DESIGN 13.15); a lost
  // message costs a cache TTL, never the change.
  const announce = async (message: Invalidation) => {
    await publishInvalidation(redis, config.QUEUE_PREFIX, message).catch((err) => app.log.warn({ err, message }, 'invalidation not announced'))
  }
  const deps: ConsoleDeps = { sql, reads, config, announce, webhooks: webhooks.queue, redis, dispatch, photos }

  const sessionTtlMs = config.CONSOLE_SESSION_TTL_H * 3600 * 1000
  // DESIGN 12: Secure except on http://localhost, where browsers have no TLS to offer.
  const local = servedLocally(config)
  await app.register(helmet, helmetOptions(config))
  await app.register(formbody, { bodyLimit: 64 * 1024 })
  // Not read here: a multipart body stays unread until the one route that takes a file asks for
  // it, after the login and CSRF checks, so an anonymous upload costs nothing.
  await app.register(multipart, { limits: { fileSize: RATE_CARD_FILE_MAX_BYTES, files: 1, fields: 10 } })
  await app.register(cookie, { secret: config.CONSOLE_SESSION_SECRET })
  await app.register(session, {
    secret: config.CONSOLE_SESSION_SECRET,
    cookieName: 'console_session',
    cookie: { path: '/console', httpOnly: true, secure: !local, sameSite: 'lax', maxAge: sessionTtlMs },
    saveUninitialized: false,
    store: postgresSessionStore(sql, sessionTtlMs),
  })
  // The CSRF secret lives in its own signed cookie, not the session: a page view by someone not
  // logged in writes no session row. A multipart form, whose body is read only after the check,
  // carries its token in the action's query string.
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: CSRF_COOKIE,
    cookieOpts: { path: '/console', httpOnly: true, secure: !local, sameSite: 'lax', signed: true },
    getToken: (request) => formToken(request.body) ?? (request.isMultipart() ? formToken(request.query) : undefined),
    getUserInfo: csrfUserOf,
    csrfOpts: { hmacKey: createHmac('sha256', config.CONSOLE_SESSION_SECRET).update('console csrf').digest() },
  })
  // Only the routes that hash a password take part (their `config.rateLimit`); counters in Redis,
  // shared by replicas; with Redis away the forms still work.
  await app.register(rateLimit, {
    global: false,
    redis,
    nameSpace: `${config.QUEUE_PREFIX}:console-login:`,
    skipOnError: true,
    errorResponseBuilder: (_request, context) => ({ statusCode: 429, code: 'CONSOLE_LOGIN_LIMIT', message: `Too many attempts from your address; try again in ${Math.max(1, Math.ceil(context.ttl / 1000))} seconds.` }),
  })

  app.decorateRequest('user', null)
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('cache-control', 'no-store')
  })
  // Every form posts its token; a request without one changes nothing.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method === 'POST') app.csrfProtection(request, reply, done)
    else done()
  })
  app.addHook('preHandler', async (request) => {
    const userId = request.session.userId
    request.user = userId ? await findConsoleUser(sql, userId) : null
  })
  installErrorPages(app)

  app.get('/console/assets/console.css', async (_request, reply) => reply.type('text/css').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS))
  await app.register(healthRoutes, { sql, reads, redis, needsRedis: false })
  await app.register(authRoutes, { sql, loginLimit: config.CONSOLE_LOGIN_LIMIT })
  // Recipients' tracking pages: public, found by an unguessable token (DESIGN 14).
  await app.register(trackingRoutes, deps)
  // Riders' pages: their own sessions, never a console user's (DESIGN 14).
  await app.register(courierAppRoutes, { ...deps, secureCookies: !local })
  await app.register(async (scope) => {
    scope.addHook('preHandler', requireRole('business'))
    await scope.register(businessRoutes, deps)
  })
  await app.register(async (scope) => {
    scope.addHook('preHandler', requireRole('operator'))
    await scope.register(operatorRoutes, deps)
  })
}

/** Not logged in: to the login page. Logged in with the other role: 403 (an operator's home is elsewhere). */
function requireRole(role: ConsoleUser['role']) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.user) return reply.code(303).redirect(`/console/login?next=${encodeURIComponent(request.url)}`)
    if (request.user.role === role) return
    if (request.user.role === 'operator' && request.url === '/console') return reply.code(303).redirect('/console/ops/businesses')
    return sendPage(reply, 403, frameOf(request, reply), { title: 'Not allowed', path: request.url, body: html`<p>Your account cannot open this page.</p>` })
  }
}

function installErrorPages(app: FastifyInstance) {
  app.setNotFoundHandler((request, reply) => {
    // `/console/` is `/console`: a typed or bookmarked trailing slash finds the page. Plain path
    // segments only, so no path can turn into another site's address (`//host`, `/\\host`).
    const [path = '', query] = request.url.split(/\?(.*)/s, 2)
    if ((request.method === 'GET' || request.method === 'HEAD') && /^(\/[\w.-]+)+\/$/.test(path)) {
      return reply.redirect(`${path.slice(0, -1)}${query === undefined ? '' : `?${query}`}`, 308)
    }
    return sendPage(reply, 404, frameOf(request, reply), notFoundPage(request.url, Boolean(request.user)))
  })
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, request, reply) => {
    // A wait that ran out (the handler's, or the database's) is a 503 to retry, not a bug.
    const waitedTooLong = err.code === 'FST_ERR_HANDLER_TIMEOUT' || isConnectionError(err) || isTimeoutError(err)
    const status = waitedTooLong ? 503 : err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500
    if (status === 500) request.log.error({ err }, 'console request failed')
    else if (status === 503) request.log.warn({ err }, 'console request waited too long')
    const text = err.code?.startsWith('FST_CSRF')
      ? 'This form has expired or did not come from the console. Go back, reload the page and try again.'
      : err.code === 'CONSOLE_LOGIN_LIMIT' ? err.message
        : status === 503 ? 'The console is slow to answer right now. Try again in a moment.'
          : status === 413 ? 'That upload is too large.' : status === 500 ? 'Something went wrong on our side. Try again in a moment.'
            // A form's own problem (a field too long, a filter that is no id) says which field and why.
            : err instanceof FormError ? `The form could not be taken: ${err.message}. Go back, correct it and send it again.` : 'The request could not be read.'
    const frame: Frame = { user: request.user, csrf: csrfTokenFor(request, reply), flash: null }
    return sendPage(reply, status, frame, { title: status === 403 ? 'Refused' : 'Error', path: request.url, body: html`<p role="alert">${text}</p>` })
  })
}

function formToken(fields: unknown): string | undefined {
  if (typeof fields !== 'object' || fields === null || !('_csrf' in fields)) return undefined
  return typeof fields._csrf === 'string' ? fields._csrf : undefined
}


export default fp(consoleApp, { name: 'console' })
