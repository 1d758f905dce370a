import { register } from 'node:module'

let shutdown: (() => Promise<void>) | null = null

/**
 * Starts the OpenTelemetry SDK with the OTLP trace exporter. Metrics are not exported here:
 * each service serves them for Prometheus on its ops port (metrics-endpoint.ts).
 */
export async function startTelemetry(): Promise<void> {
  // ESM modules are patched through the loader hook, registered before they are imported.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
  const { NodeSDK } = await import('@opentelemetry/sdk-node')
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http')
  const { HttpInstrumentation } = await import('@opentelemetry/instrumentation-http')
  const { IORedisInstrumentation } = await import('@opentelemetry/instrumentation-ioredis')
  const fastifyOtel = await (await import('./fastify.js')).fastifyOtel()
  const { redactSpanUrls } = await import('./redact-span.js')
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? serviceFromEntry(),
    traceExporter: new OTLPTraceExporter(),
    instrumentations: [new HttpInstrumentation({ requestHook: redactSpanUrls }), new IORedisInstrumentation({ requireParentSpan: true }), fastifyOtel],
    // Without these the SDK exports metrics and logs to localhost:4318 and hangs on shutdown.
    metricReaders: [],
    logRecordProcessors: [],
  })
  sdk.start()
  shutdown = () => sdk.shutdown()
}

/** Flushes spans still buffered; a no-op when telemetry never started. */
export async function stopTelemetry(): Promise<void> {
  await shutdown?.().catch(() => {})
}

/** `courier-<service>` as its metrics name it (runService): the worker's directory is placement-worker. */
export function serviceFromEntry(entry = process.argv[1] ?? ''): string {
  const directory = /services[\\/]([^\\/]+)[\\/]main/.exec(entry)?.[1]
  return `courier-${directory === 'placement-worker' ? 'worker' : directory ?? 'service'}`
}
