import Fastify from 'fastify'
import { loadConfig, workerEnv } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { runService } from '../../shared/http/run-service.js'
import { startPlacementWorker } from './worker.js'

await runService({
  name: 'worker',
  loadConfig: () => loadConfig(workerEnv),
  opsPort: (config) => config.WORKER_OPS_PORT,
  start: async (config) => {
    // The worker's HTTP port serves health only; its work arrives through the queue.
    const app = Fastify({ logger: loggerOptions(config.LOG_LEVEL), ...quietRequests })
    await app.register(startPlacementWorker, { config })
    return { app, port: config.WORKER_PORT, host: config.HOST }
  },
})
