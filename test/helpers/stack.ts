import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { gatewayEnv, loadConfig, pricingEnv, workerEnv } from '../../shared/config.js'
import gatewayApp from '../../services/gateway/app.js'
import { gatewayServerOptions } from '../../services/gateway/server-options.js'
import { startPlacementWorker } from '../../services/placement-worker/worker.js'
import { useTestDb, type TestDb } from './db.js'

export interface Stack {
  db: TestDb
  gateway: FastifyInstance
  pricing: FastifyInstance
  worker: FastifyInstance | null
}

/**
 * The three services of one test file, built from the same plugins production runs, on the
 * file's own schema and queue prefix. The pricing service listens on a free port because the
 * gateway reaches it over HTTP, as in production; the gateway is driven with `inject`.
 */
export async function startStack(t: Test, options: { worker?: boolean; env?: Record<string, string> } = {}): Promise<Stack> {
  const db = await useTestDb(t)
  const env = { ...db.env, ...options.env }

  const { default: pricingApp } = await import('../../services/pricing/app.js')
  const pricing = Fastify({ logger: false })
  await pricing.register(pricingApp, { config: loadConfig(pricingEnv, env) })
  await pricing.listen({ port: 0, host: '127.0.0.1' })
  const address = pricing.server.address()
  const pricingUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`

  let worker: FastifyInstance | null = null
  if (options.worker !== false) {
    worker = Fastify({ logger: false })
    await worker.register(startPlacementWorker, { config: loadConfig(workerEnv, { WORKER_CONCURRENCY: '4', ...env }) })
    await worker.ready()
  }

  const gatewayConfig = loadConfig(gatewayEnv, { PRICING_URL: pricingUrl, RATE_LIMIT_MAX: '0', ...env })
  const gateway = Fastify({ ...gatewayServerOptions(gatewayConfig), logger: false })
  await gateway.register(gatewayApp, { config: gatewayConfig })
  await gateway.ready()

  // The services let go of their connections here; useTestDb's own teardown drops the schema.
  t.teardown(async () => {
    await gateway.close()
    await worker?.close()
    await pricing.close()
  })
  return { db, gateway, pricing, worker }
}

export function bearer(apiKey: string) {
  return { authorization: `Bearer ${apiKey}` }
}
