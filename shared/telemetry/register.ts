// Loaded with `node --import` before a service's own modules, so instrumentation can patch
// them as they load. Tracing costs nothing unless an exporter endpoint is configured.
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) {
  const { startTelemetry } = await import('./sdk.js')
  await startTelemetry()
}
export {}
