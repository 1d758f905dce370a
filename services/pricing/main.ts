import Fastify from 'fastify'
import { loadConfig, pricingEnv } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { requestTimeouts, runService } from '../../shared/http/run-service.js'
import pricingApp from './app.js'

await runService({
  name: 'pricing',
  loadConfig: () => loadConfig(pricingEnv),
  opsPort: (config) => config.PRICING_OPS_PORT,
  start: async (config) => {
    const app = Fastify({ logger: loggerOptions(config.LOG_LEVEL), ...quietRequests, ...requestTimeouts(config), return503OnClosing: true })
    await app.register(pricingApp, { config })
    return { app, port: config.PRICING_PORT, host: config.HOST }
  },
})
