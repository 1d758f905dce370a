import Fastify from 'fastify'
import { loadConfig, webhookSenderEnv } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { runService } from '../../shared/http/run-service.js'
import { startWebhookSender } from './sender.js'

await runService({
  name: 'webhook-sender',
  loadConfig: () => loadConfig(webhookSenderEnv),
  opsPort: (config) => config.WEBHOOK_SENDER_OPS_PORT,
  start: async (config) => {
    // Its HTTP port serves health only; its work comes from the outbox and the queue.
    const app = Fastify({ logger: loggerOptions(config.LOG_LEVEL), ...quietRequests })
    await app.register(startWebhookSender, { config })
    return { app, port: config.WEBHOOK_SENDER_PORT, host: config.HOST }
  },
})
