import { randomUUID } from 'node:crypto'
import type { FastifyServerOptions } from 'fastify'
import type { GatewayConfig } from '../../shared/config.js'
import { loggerOptions } from '../../shared/http/observability.js'

const CALLER_REQUEST_ID = /^[\w.:-]{1,128}$/

/** Options fixed when the server is constructed; `main` and the tests both use these. */
export function gatewayServerOptions(config: GatewayConfig): FastifyServerOptions {
  return {
    bodyLimit: config.BODY_LIMIT_BYTES,
    // No request outlives this, whatever it waits on; a placement answers its own 503 before.
    requestTimeout: config.REQUEST_TIMEOUT_MS,
    // A caller's own x-request-id is kept when it is sane, so its logs and ours line up.
    requestIdHeader: false,
    genReqId: (req) => {
      const own = req.headers['x-request-id']
      return typeof own === 'string' && CALLER_REQUEST_ID.test(own) ? own : randomUUID()
    },
    logger: loggerOptions(config.LOG_LEVEL),
    trustProxy: true,
    return503OnClosing: true,
  }
}
