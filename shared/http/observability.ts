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
  app.addHook('onResponse', async (request, reply) => {
    instruments().httpDuration.record(reply.elapsedTime / 1000, {
      'http.request.method': request.method,
      'http.route': request.routeOptions.url ?? 'unmatched',
      'http.response.status_code': reply.statusCode,
    })
  })
}, { name: 'request-metrics' })
