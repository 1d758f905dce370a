import Fastify from 'fastify'
import { loadConfig, workerEnv } from '../../shared/config.js'
import { runService } from '../../shared/http/run-service.js'
import { startPlacementWorker } from './worker.js'

await runService('worker', () => loadConfig(workerEnv), async (config) => {
  // The worker's HTTP port serves health only; its work arrives through the queue.
  const app = Fastify({ logger: { level: config.LOG_LEVEL } })
  await app.register(startPlacementWorker, { config })
  return { app, port: config.WORKER_PORT, host: config.HOST }
})
