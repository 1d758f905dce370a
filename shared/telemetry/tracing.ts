import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api'
import { errorMessage } from '../errors/error-message.js'

/** The tracer of every manual span in the project; a no-op until an SDK registers a provider. */
export const tracer = trace.getTracer('courier')

/**
 * Runs `work` inside an active span, so spans it causes (SQL, Redis, HTTP) become its children.
 * A thrown error marks the span failed and is rethrown unchanged.
 */
export async function inSpan<T>(name: string, attributes: Attributes, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work(span)
    } catch (err) {
      span.recordException(err instanceof Error ? err : errorMessage(err))
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(err) })
      throw err
    } finally {
      span.end()
    }
  })
}

/**
 * A span around one SQL step. The `postgres` package has no instrumentation, so the steps of
 * the placement transaction are named by hand; statement text is left out on purpose.
 */
export function sqlSpan<T>(operation: string, work: () => Promise<T>): Promise<T> {
  return inSpan(`sql ${operation}`, { 'db.system': 'postgresql', 'db.operation.name': operation }, () => work())
}

/** The active span's W3C `traceparent`, to be stored with what it wrote; null when nothing is traced. */
export function activeTraceparent(): string | null {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  return carrier.traceparent ?? null
}

/** Runs `work` as a continuation of the trace a stored `traceparent` names (or as it is, without one). */
export function continuingTrace<T>(traceparent: string | null, work: () => Promise<T>): Promise<T> {
  if (traceparent === null) return work()
  return context.with(propagation.extract(ROOT_CONTEXT, { traceparent }), work)
}

/** The trace id of the active span, for log lines. */
export function activeTraceId(): string | undefined {
  const context = trace.getActiveSpan()?.spanContext()
  return context && trace.isSpanContextValid(context) ? context.traceId : undefined
}
