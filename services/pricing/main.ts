import Fastify from 'fastify'
import { loadConfig, pricingEnv } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import pricingApp from './app.js'

await runService('pricing', () => loadConfig(pricingEnv), async (config) => {
  const app = Fastify({ logger: { level: config.LOG_LEVEL }, return503OnClosing: true })
  await app.register(pricingApp, { config })
  return { app, port: config.PRICING_PORT, host: config.HOST }
})
