import type { FastifyServerOptions } from 'fastify'
import type { PricingConfig } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { requestTimeouts } from '../../shared/http/run-service.js'

/** fastify's options for pricing, one place for production and tests: no request outlives REQUEST_TIMEOUT_MS. */
export function pricingServerOptions(config: PricingConfig): FastifyServerOptions {
  return { logger: loggerOptions(config.LOG_LEVEL), ...quietRequests, ...requestTimeouts(config), return503OnClosing: true }
}
