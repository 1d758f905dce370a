import { metrics } from '@opentelemetry/api'
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { MeterProvider } from '@opentelemetry/sdk-metrics'
import { SECONDS_BUCKETS } from './metrics.js'
import { RequestDurations } from './request-durations.js'
import { observeRuntime } from './runtime.js'

/** Request count and latency per route, method and status, in every service; kept outside the SDK (request-durations.ts). */
export const requestDurations = new RequestDurations('http_server_request_duration_seconds', 'HTTP requests by route, method and status', SECONDS_BUCKETS)

/**
 * Serves the OpenTelemetry metrics of this process for Prometheus at `/metrics` on the ops
 * port, never on the public one.
 */
export function startMetrics(port: number, host: string, serviceName = 'courier'): { close: () => Promise<void> } {
  const exporter = new PrometheusExporter({ port, host, endpoint: '/metrics', metricProducers: [requestDurations] })
  const provider = new MeterProvider({ readers: [exporter], resource: resourceFromAttributes({ 'service.name': process.env.OTEL_SERVICE_NAME ?? serviceName }) })
  metrics.setGlobalMeterProvider(provider)
  const runtime = observeRuntime(metrics.getMeter('courier'))
  return { close: async () => { runtime.stop(); await provider.shutdown() } }
}
