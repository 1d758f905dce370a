import Fastify from 'fastify'
import { loadConfig, pricingEnv } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import pricingApp from './app.js'
import { pricingServerOptions } from './server-options.js'

await runService({
  name: 'pricing',
  loadConfig: () => loadConfig(pricingEnv),
  opsPort: (config) => config.PRICING_OPS_PORT,
  start: async (config) => {
    const app = Fastify(pricingServerOptions(config))
    await app.register(pricingApp, { config })
    return { app, port: config.PRICING_PORT, host: config.HOST }
  },
})
