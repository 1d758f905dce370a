import Fastify from 'fastify'
import { consoleEnv, loadConfig } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import consoleApp from './app.js'
import { consoleServerOptions } from './server-options.js'

await runService({
  name: 'console',
  loadConfig: () => loadConfig(consoleEnv),
  opsPort: (config) => config.CONSOLE_OPS_PORT,
  start: async (config) => {
    const app = Fastify(consoleServerOptions(config))
    await app.register(consoleApp, { config })
    return { app, port: config.CONSOLE_PORT, host: config.HOST }
  },
})
