import Fastify from 'fastify'
import { gatewayEnv, loadConfig } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import gatewayApp from './app.js'
import { gatewayServerOptions } from './server-options.js'

await runService({
  name: 'gateway',
  loadConfig: () => loadConfig(gatewayEnv),
  opsPort: (config) => config.GATEWAY_OPS_PORT,
  start: async (config) => {
    const app = Fastify(gatewayServerOptions(config))
    await app.register(gatewayApp, { config })
    return { app, port: config.GATEWAY_PORT, host: config.HOST }
  },
})
