import type { FastifyOtelInstrumentation } from '@fastify/otel'
import { ProxyTracerProvider, trace } from '@opentelemetry/api'
import { redactSpanUrls } from './redact-span.js'

let instrumentation: Promise<FastifyOtelInstrumentation> | undefined

/**
 * One instrumentation for the process: the SDK enables it, and every app registers its plugin
 * before its routes so each request gets a span in the caller's trace. Loaded on first use, so
 * a process that traces nothing never loads `@fastify/otel` (about a tenth of a second of CPU
 * at each start).
 */
export function fastifyOtel(): Promise<FastifyOtelInstrumentation> {
  instrumentation ??= import('@fastify/otel').then(({ FastifyOtelInstrumentation }) => new FastifyOtelInstrumentation({
    ignorePaths: (options: { url: string }) => ['/healthz', '/readyz'].includes(options.url),
    // The span's `url.path` is the raw URL: a set-password token or a tracking link must not ride in it.
    requestHook: redactSpanUrls,
  }))
  return instrumentation
}

// What the API hands out while no SDK has registered a tracer provider.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate()

/**
 * Whether a tracer provider is registered (the SDK started, or a test registered one). Without
 * one every span is a no-op, so the apps skip the per-request hooks of `@fastify/otel`: they
 * are the largest cost of the gateway and pricing beyond the bare stack (docs/performance.md),
 * for spans nobody records.
 */
export function tracingActive(): boolean {
  const provider = trace.getTracerProvider()
  const delegate = provider instanceof ProxyTracerProvider ? provider.getDelegate() : provider
  return delegate !== NOOP_PROVIDER
}
