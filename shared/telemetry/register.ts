// Loaded with `node --import` before a service's own modules, so instrumentation can patch
// them as they load. Telemetry costs nothing unless an exporter is configured.
if (process.env.OTEL_EXPORTER_OTLP_ENDPOINT) {
  const { startTelemetry } = await import('./sdk.js')
  await startTelemetry()
}
export {}
