import { register } from 'node:module'

/** Starts the OpenTelemetry SDK; filled in with exporters by the observability work. */
export async function startTelemetry(): Promise<void> {
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url)
}
