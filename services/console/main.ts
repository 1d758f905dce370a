import Fastify from 'fastify'
import { consoleEnv, loadConfig } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { requestTimeouts, runService } from '../../shared/http/run-service.js'
import { trustProxyOption } from '../../shared/http/trust-proxy.js'
import consoleApp from './app.js'

await runService({
  name: 'console',
  loadConfig: () => loadConfig(consoleEnv),
  opsPort: (config) => config.CONSOLE_OPS_PORT,
  start: async (config) => {
    const app = Fastify({ logger: loggerOptions(config.LOG_LEVEL), ...quietRequests, ...requestTimeouts(config), trustProxy: trustProxyOption(config.TRUST_PROXY), return503OnClosing: true })
    await app.register(consoleApp, { config })
    return { app, port: config.CONSOLE_PORT, host: config.HOST }
  },
})
