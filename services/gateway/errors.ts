import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../shared/errors/api-error.js'
import { apiErrorBody, errorBody, toApiError } from '../../shared/errors/error-body.js'
import { isConnectionError, isTimeoutError } from '../../shared/db/sql.js'

/** Fastify's own errors and the fixed messages docs/contracts.md gives them. */
function fromFastify(err: FastifyError, bodyLimit: number, mediaTypes: string | undefined): ApiError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, `Request body is larger than ${bodyLimit} bytes`)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, `Content-Type must be ${mediaTypes ?? 'application/json'}`)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'Malformed JSON in request body')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'Content-Length does not match the request body')
    case 'FST_ERR_HANDLER_TIMEOUT':
      return new ApiError(503, 'The request took too long to answer, retry shortly')
  }
  // A JSON.parse of our own (a cursor, a stored value) that throws is still the caller's bad JSON.
  if (err instanceof SyntaxError) return new ApiError(400, 'Malformed JSON in request body')
  if (err.statusCode === 429) return new ApiError(429, err.message)
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new ApiError(err.statusCode, err.message)
  return null
}

/**
 * The one place any error becomes the spec's body. A 5xx never shows its cause: it is logged
 * with the request id the caller also receives.
 */
export function installErrorBody(app: FastifyInstance, bodyLimit: number): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    // Postgres out of reach, or too busy to answer within its session bounds, is an outage to
    // wait out, not a bug: 503, so clients retry.
    const known = toApiError(err) ?? (isConnectionError(err) || isTimeoutError(err) ? new ApiError(503, 'Service temporarily unavailable, retry shortly') : fromFastify(err, bodyLimit, request.routeOptions.config.mediaTypes))
    if (!known) request.log.error({ err }, 'unhandled error')
    const answer = known ?? new ApiError(500, 'Internal server error')
    return reply.code(answer.statusCode).send(apiErrorBody(answer, request.url, request.id))
  })

  app.setNotFoundHandler((request, reply) => {
    const message = `Cannot ${request.method} ${request.url.split('?')[0]}`
    reply.code(404).send(errorBody(404, request.url, message, { request_id: request.id }))
  })
}
