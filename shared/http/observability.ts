import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'fastify/types/logger.js'
import fp from 'fastify-plugin'
import { requestDurations } from '../telemetry/metrics-endpoint.js'
import { activeTraceId } from '../telemetry/tracing.js'
import { REDACTED_LOG_PATHS, redactUrl } from './redact.js'

/**
 * Logger options shared by the services: structured pino lines with the trace id, and
 * secrets and personal data redacted wherever they might appear.
 */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    mixin: () => {
      const traceId = activeTraceId()
      return traceId ? { trace_id: traceId } : {}
    },
    redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
    serializers: { req: serializeRequest },
  }
}

/**
 * Fastify's own request serializer, with the URL's secret query parameters redacted. Whatever
 * else a line logs as `req` keeps only these fields.
 */
function serializeRequest(request: FastifyRequest) {
  const url: unknown = request.url
  return { method: request.method, url: typeof url === 'string' ? redactUrl(url) : undefined, host: request.host, remoteAddress: request.ip, remotePort: request.socket?.remotePort }
}

// pino's numeric levels: a line is written when its level is at least the logger's.
const LEVELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity }

function writesAt(logger: FastifyBaseLogger, level: string): boolean {
  return (LEVELS[level] ?? 0) >= (LEVELS[logger.level] ?? 0)
}

/**
 * A request's logger that becomes pino's child (bound to the request id) only when a line is
 * written at an enabled level. Fastify makes one child per request, and pino runs the redaction
 * over its bindings: a cost on every quote (docs/performance.md), for a logger that a request
 * that goes well never writes to.
 */
class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | null = null
  readonly #parent: FastifyBaseLogger
  readonly #bindings: Bindings
  readonly #options: ChildLoggerOptions

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent
    this.#bindings = bindings
    this.#options = options
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options)
    return this.#child
  }

  get level(): string {
    return this.#child?.level ?? this.#parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  // The level methods are the class's own, not closures made per instance: one logger is made
  // per request, and six closures each would be garbage on every quote.
  #write(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', obj: unknown, msg: string | undefined, args: unknown[]): void {
    if (writesAt(this, level)) this.#logger()[level](obj, msg, ...args)
  }

  fatal(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('fatal', obj, msg, args) }
  error(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('error', obj, msg, args) }
  warn(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('warn', obj, msg, args) }
  info(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('info', obj, msg, args) }
  debug(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('debug', obj, msg, args) }
  trace(obj: unknown, msg?: string, ...args: unknown[]): void { this.#write('trace', obj, msg, args) }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }
}

/**
 * What every service's constructor sets beside its logger: one log line per request, from
 * `requestLog`, and the request's logger made only when it writes.
 */
export const quietRequests = {
  logController: new LogController({ disableRequestLogging: true }),
  childLoggerFactory: (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) => new RequestLogger(logger, bindings, options),
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A long-lived answer (server-sent events): its length is its client's, not a slowness. */
    stream?: boolean
    /** The bodies a route reads, for its 415 (services/gateway/errors.ts): application/json unless it says. */
    mediaTypes?: string
  }
}

/**
 * One log line per request that needs looking into: failed (4xx at info, 5xx at warn) or slower
 * than `slowMs`, with its request id, route, status and time. A request that went well is logged
 * only at debug. Fastify's own two lines per request (in and out) are turned off by
 * `quietRequests`: at thousands of requests a second they cost more than the request itself,
 * and an operator looks a request up by the `request_id` of its error body or by its slowness.
 */
export const requestLog = fp(async (app: FastifyInstance, { slowMs }: { slowMs: number }) => {
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode
    const ms = reply.elapsedTime
    // A stream (`config: { stream: true }`) is open for as long as its client listens: never slow.
    const slow = ms >= slowMs && request.routeOptions.config.stream !== true
    if (status < 400 && !slow) {
      // Checked first: the line's object is not worth making for a level that is off.
      if (writesAt(request.log, 'debug')) request.log.debug({ method: request.method, url: redactUrl(request.url), statusCode: status, responseTime: ms }, 'request completed')
    } else {
      const line = { method: request.method, url: redactUrl(request.url), route: request.routeOptions.url, statusCode: status, responseTime: ms, slow }
      if (status >= 500) request.log.warn(line, 'request failed')
      else request.log.info(line, status >= 400 ? 'request refused' : 'slow request')
    }
    done()
  })
}, { name: 'request-log' })

/** Request count and latency per route, method and status, for every service. */
export const requestMetrics = fp(async (app: FastifyInstance) => {
  app.addHook('onResponse', (request, reply, done) => {
    requestDurations.record(reply.elapsedTime / 1000, request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode)
    done()
  })
}, { name: 'request-metrics' })
