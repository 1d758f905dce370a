import type { Writable } from 'node:stream'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { dispatcherEnv, gatewayEnv, loadConfig, pricingEnv, webhookSenderEnv, workerEnv } from '../../shared/config.js'
import { startDispatcher } from '../../services/dispatcher/dispatcher.js'
import { loggerOptions } from '../../shared/http/observability.js'
import gatewayApp from '../../services/gateway/app.js'
import { gatewayServerOptions } from '../../services/gateway/server-options.js'
import { pricingServerOptions } from '../../services/pricing/server-options.js'
import { startPlacementWorker } from '../../services/placement-worker/worker.js'
import { startWebhookSender } from '../../services/webhook-sender/sender.js'
import { useTestDb, type TestDb } from './db.js'
import { checkResponsesAgainstDocument } from './openapi-responses.js'

export interface Stack {
  db: TestDb
  gateway: FastifyInstance
  pricing: FastifyInstance
  worker: FastifyInstance | null
  webhookSender: FastifyInstance | null
}

/**
 * The three services of one test file, built from the same plugins production runs, on the
 * file's own schema and queue prefix. The pricing service listens on a free port because the
 * gateway reaches it over HTTP, as in production; the gateway is driven with `inject`.
 */
export interface StackOptions {
  worker?: boolean
  /** The webhook sender (relay, sweep and deliveries), off unless asked for. */
  webhookSender?: boolean
  /** The dispatcher (offers to couriers, expiry, sweep), off unless asked for. */
  dispatcher?: boolean
  env?: Record<string, string>
  /** Where the gateway writes its log lines, at trace level and with production's redaction; silent without it. */
  gatewayLog?: Writable
}

// Test receivers listen on http://127.0.0.1, as under `npm start`; a test of the URL rules sets both false.
const LOCAL_WEBHOOKS = { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' }

export async function startStack(t: Test, options: StackOptions = {}): Promise<Stack> {
  const db = await useTestDb(t)
  const env = { ...db.env, ...options.env }

  const { app: pricing, url: pricingUrl } = await startPricing(env)

  let worker: FastifyInstance | null = null
  if (options.worker !== false) {
    worker = Fastify({ logger: false })
    await worker.register(startPlacementWorker, { config: loadConfig(workerEnv, { WORKER_CONCURRENCY: '4', ...env }) })
    await worker.ready()
  }

  let webhookSender: FastifyInstance | null = null
  if (options.webhookSender) {
    webhookSender = Fastify({ logger: false })
    await webhookSender.register(startWebhookSender, { config: loadConfig(webhookSenderEnv, { ...LOCAL_WEBHOOKS, ...env }) })
    await webhookSender.ready()
  }

  let dispatcher: FastifyInstance | null = null
  if (options.dispatcher) {
    dispatcher = Fastify({ logger: false })
    await dispatcher.register(startDispatcher, { config: loadConfig(dispatcherEnv, env) })
    await dispatcher.ready()
  }

  const gatewayConfig = loadConfig(gatewayEnv, { PRICING_URL: pricingUrl, RATE_LIMIT_MAX: '0', ...LOCAL_WEBHOOKS, ...env })
  const logger = loggerOptions('trace')
  const gatewayLog = options.gatewayLog && typeof logger === 'object' ? { ...logger, stream: options.gatewayLog } : false
  const gateway = Fastify({ ...gatewayServerOptions(gatewayConfig), logger: gatewayLog })
  checkResponsesAgainstDocument(gateway)
  await gateway.register(gatewayApp, { config: gatewayConfig })
  await gateway.ready()

  // The services let go of their connections here; useTestDb's own teardown drops the schema.
  t.teardown(async () => {
    await gateway.close()
    await webhookSender?.close()
    await dispatcher?.close()
    await worker?.close()
    await pricing.close()
  })
  return { db, gateway, pricing, worker, webhookSender }
}

/**
 * The pricing service as production builds it: its own pool and Redis from the environment,
 * listening on a free port. The caller closes it (startStack does, in its teardown).
 */
export async function startPricing(env: Record<string, string>): Promise<{ app: FastifyInstance; url: string }> {
  const { default: pricingApp } = await import('../../services/pricing/app.js')
  const config = loadConfig(pricingEnv, env)
  const app = Fastify({ ...pricingServerOptions(config), logger: false })
  await app.register(pricingApp, { config })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  return { app, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` }
}

export function bearer(apiKey: string) {
  return { authorization: `Bearer ${apiKey}` }
}
