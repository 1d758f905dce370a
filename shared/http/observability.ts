import type { Attributes } from '@opentelemetry/api'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { instruments } from '../telemetry/metrics.js'
import { activeTraceId } from '../telemetry/tracing.js'

/**
 * Logger options shared by the three services: structured pino lines with the trace id, and
 * secrets and personal data redacted wherever they might appear.
 */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    mixin: () => {
      const traceId = activeTraceId()
      return traceId ? { trace_id: traceId } : {}
    },
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'api_key', '*.api_key', 'recipient_phone', '*.recipient_phone', '*.alternate_phone', '*.sender_phone', '*[*].recipient_phone', '*[*].alternate_phone'],
      censor: '[redacted]',
    },
  }
}

/** Request count and latency per route, method and status, for every service. */
export const requestMetrics = fp(async (app: FastifyInstance) => {
  // One attributes object per route, method and status, made once: the hot path then only
  // looks it up instead of building and hashing a fresh object per request.
  const attributeSets = new Map<string, Attributes>()
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched'
    const key = `${request.method} ${reply.statusCode} ${route}`
    let attributes = attributeSets.get(key)
    if (!attributes) {
      attributes = { 'http.request.method': request.method, 'http.route': route, 'http.response.status_code': reply.statusCode }
      attributeSets.set(key, attributes)
    }
    instruments().httpDuration.record(reply.elapsedTime / 1000, attributes)
    done()
  })
}, { name: 'request-metrics' })
