import { z } from 'zod'
import { ApiError } from './api-error.js'
import { PricingError } from './pricing-error.js'
import type { ErrorItem } from './validation-error.js'
import { parseJsonAs } from '../parse-json.js'

/** The spec's error body. Extra fields (`errors`, `request_id`, …) follow the four it names. */
export function errorBody(statusCode: number, path: string, message: string, extra: Record<string, unknown> = {}) {
  return {
    statusCode,
    timestamp: new Date().toISOString(),
    path: path.split('?')[0],
    message,
    ...extra,
  }
}

/**
 * The one mapping of a domain error to its HTTP answer, shared by the gateway and the pricing
 * service so a refusal reads the same whichever raised it. A `ValidationError` is an
 * `ApiError` already and keeps its `errors`; `null` means "not a known refusal".
 */
export function toApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err
  if (err instanceof PricingError) return new ApiError(400, err.message)
  return null
}

/** The body of a known refusal, at the path the caller asked for, with the request id to trace it by. */
export function apiErrorBody(error: ApiError, path: string, requestId: string) {
  return errorBody(error.statusCode, path, error.message, { ...error.extra, request_id: requestId })
}

const errorItemSchema = z.object({ index: z.number().int().optional(), field: z.string().optional(), message: z.string() })

/** The parts of another service's error body worth relaying: its own path, time and request id stay behind. */
const relayedSchema = z.object({ message: z.string(), errors: z.array(errorItemSchema).optional() })

/**
 * Reads another service's refusal back into an `ApiError` carrying `message` and `errors`, so
 * the caller's error handler answers it at the caller's own path. `null` when it is no such body.
 */
export function relayedApiError(statusCode: number, text: string): ApiError | null {
  const relayed = parseJsonAs(relayedSchema, text)
  if (!relayed) return null
  const errors: ErrorItem[] | undefined = relayed.errors
  return new ApiError(statusCode, relayed.message, errors ? { errors } : {})
}
