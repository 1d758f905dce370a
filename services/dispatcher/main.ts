import Fastify from 'fastify'
import { dispatcherEnv, loadConfig } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { runService } from '../../shared/http/run-service.js'
import { startDispatcher } from './dispatcher.js'

await runService({
  name: 'dispatcher',
  loadConfig: () => loadConfig(dispatcherEnv),
  opsPort: (config) => config.DISPATCHER_OPS_PORT,
  start: async (config) => {
    // Health only on HTTP; the work arrives through the `dispatch` queue.
    const app = Fastify({ logger: loggerOptions(config.LOG_LEVEL), ...quietRequests })
    await app.register(startDispatcher, { config })
    return { app, port: config.DISPATCHER_PORT, host: config.HOST }
  },
})
