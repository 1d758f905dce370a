import type { FastifyInstance } from 'fastify'
import { ConfigError, type ServingConfig } from '../config.js'
import { startMetrics } from '../telemetry/metrics-endpoint.js'
import { stopTelemetry } from '../telemetry/sdk.js'
import { errorCode, errorMessage } from '../errors/error-message.js'

/**
 * fastify's bound on receiving one request; answering it is bounded by the same figure in each
 * app (`handler-deadline.ts`: a 503 with the error body, whatever the handler still waits on).
 */
export function requestTimeouts(config: Pick<ServingConfig, 'REQUEST_TIMEOUT_MS'>) {
  return { requestTimeout: config.REQUEST_TIMEOUT_MS }
}

interface Running {
  app: FastifyInstance
  port: number
  host: string
}

interface ServiceDefinition<C> {
  name: string
  loadConfig: () => C
  /** Where Prometheus scrapes `/metrics`. Metrics start before the app is built, so its instruments are real. */
  opsPort: (config: C) => number
  start: (config: C) => Promise<Running>
}

/**
 * What every service's `main` does: parse config (a bad value stops start-up with a message),
 * build, listen, and on SIGTERM or SIGINT close — which drains in-flight requests and runs each
 * plugin's `onClose` — then exit.
 */
export async function runService<C extends { HOST: string }>({ name, loadConfig, opsPort, start }: ServiceDefinition<C>): Promise<void> {
  let config: C
  try {
    config = loadConfig()
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`${name}: ${err.message}`)
      process.exit(1)
    }
    throw err
  }
  const metrics = await startMetrics(opsPort(config), config.HOST, `courier-${name}`).catch((err: unknown) => {
    console.error(`${name}: ${listenFailure(err, `ops port ${opsPort(config)}`, config.HOST)}`)
    process.exit(1)
  })
  const { app, port, host } = await start(config)
  let closing = false
  const stop = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, `${name} stopping`)
    const forced = setTimeout(() => process.exit(1), 30_000).unref()
    try {
      await app.close()
      await metrics.close()
      await stopTelemetry()
    } finally {
      clearTimeout(forced)
      process.exit(0)
    }
  }
  process.once('SIGTERM', () => void stop('SIGTERM'))
  process.once('SIGINT', () => void stop('SIGINT'))
  try {
    await app.listen({ port, host })
  } catch (err) {
    console.error(`${name}: ${listenFailure(err, `port ${port}`, host)}`)
    await app.close().catch(() => {})
    await metrics.close().catch(() => {})
    process.exit(1)
  }
}

/** Why a service could not listen on `port` (its public port or its ops port, named so), naming what to change. */
function listenFailure(err: unknown, port: string, host: string): string {
  const code = errorCode(err)
  if (code === 'EADDRINUSE') return `${port} is already in use; stop what holds it or set another port`
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EADDRNOTAVAIL') return `cannot listen on HOST ${host}: no address of this machine (${errorMessage(err)})`
  if (code === 'EACCES') return `${port} needs privileges this process does not have; set another port`
  return errorMessage(err)
}
