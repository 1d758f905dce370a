import { FastifyOtelInstrumentation } from '@fastify/otel'

/**
 * One instrumentation for the process: the SDK enables it, and every app registers its plugin
 * before its routes so each request gets a span in the caller's trace.
 */
export const fastifyOtel = new FastifyOtelInstrumentation({
  ignorePaths: (options: { url: string }) => ['/healthz', '/readyz'].includes(options.url),
})
