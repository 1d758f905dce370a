import Fastify from 'fastify'
import { gatewayEnv, loadConfig } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import gatewayApp from './app.js'
import { gatewayServerOptions } from './server-options.js'

await runService('gateway', () => loadConfig(gatewayEnv), async (config) => {
  const app = Fastify(gatewayServerOptions(config))
  await app.register(gatewayApp, { config })
  return { app, port: config.GATEWAY_PORT, host: config.HOST }
})
