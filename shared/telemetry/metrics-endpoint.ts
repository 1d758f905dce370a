import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import path from 'node:path'
import { metrics } from '@opentelemetry/api'
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { projectRoot } from '../project-root.js'
import { SECONDS_BUCKETS } from './metrics.js'
import { RequestDurations } from './request-durations.js'
import { observeRuntime } from './runtime.js'

/** Request count and latency per route, method and status, in every service; kept outside the SDK (request-durations.ts). */
export const requestDurations = new RequestDurations('http_server_request_duration_seconds', 'HTTP requests by route, method and status', SECONDS_BUCKETS)

/** The version in package.json, read once: the same file in a checkout and in the image. */
const PACKAGE_VERSION = ((): string => {
  const manifest: unknown = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'))
  return typeof manifest === 'object' && manifest !== null && 'version' in manifest ? String(manifest.version) : 'unknown'
})()

export interface MetricsEndpoint {
  /** The ops port listened on: the one asked for, or the one the system chose for `0`. */
  port: number
  close: () => Promise<void>
}

/**
 * Serves the OpenTelemetry metrics of this process for Prometheus at `/metrics` on the ops
 * port, never on the public one. The server is ours, not the exporter's: the exporter reads a
 * port of `0` as its default 9464 and reports a port it cannot take only to OpenTelemetry's
 * diagnostics, so a second process would serve no metrics while Prometheus scraped whatever held
 * the port. Here `0` means any free port, and a port that cannot be taken rejects (the service
 * then stops, `run-service.ts`).
 */
export async function startMetrics(port: number, host: string, serviceName = 'courier'): Promise<MetricsEndpoint> {
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [requestDurations] })
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url?.split('?', 1)[0] === '/metrics') return exporter.getMetricsRequestHandler(request, response)
    response.statusCode = 404
    response.end()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({ port, host }, () => {
      server.off('error', reject)
      resolve()
    })
  })
  server.unref()
  // `target_info{service_version}`: which release each replica runs, for a dashboard to mark a
  // deploy. The package's version, or what OTEL_RESOURCE_ATTRIBUTES says (an image tag, a commit).
  const resource = resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? serviceName, 'service.version': PACKAGE_VERSION })
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new MeterProvider({ readers: [exporter], resource })
  metrics.setGlobalMeterProvider(provider)
  const runtime = observeRuntime(metrics.getMeter('courier'))
  const address = server.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : port,
    close: async () => {
      runtime.stop()
      await provider.shutdown()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
