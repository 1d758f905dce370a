import { randomUUID } from 'node:crypto'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions, ConnectionError } from 'fastify'
import { errorBody } from '../../shared/errors/error-body.js'
import type { GatewayConfig } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { requestTimeouts } from '../../shared/http/run-service.js'
import { trustProxyOption } from '../../shared/http/trust-proxy.js'

const CALLER_REQUEST_ID = /^[\w.:-]{1,128}$/

/** One year, subdomains included: what the Ingress sends too (deploy/k8s/gateway.yaml). */
export const STRICT_TRANSPORT_SECURITY = 'max-age=31536000; includeSubDomains'

/**
 * The headers of every answer: the request id, and HSTS when served over https (PUBLIC_BASE_URL),
 * so clients never fall back to plain http, where the Bearer key would cross in clear text. The
 * app's first hook sets them, and so does the answer to a path the router cannot read, which
 * runs no hook.
 */
export function answerHeaders(config: Pick<GatewayConfig, 'PUBLIC_BASE_URL'>): (request: FastifyRequest, reply: FastifyReply) => void {
  const hsts = config.PUBLIC_BASE_URL?.startsWith('https:') === true
  return (request, reply) => {
    reply.header('x-request-id', request.id)
    if (hsts) reply.header('strict-transport-security', STRICT_TRANSPORT_SECURITY)
  }
}

// What Node's HTTP parser refuses before any route runs: headers past `maxHeaderSize` (16 KB), a
// request not received within REQUEST_TIMEOUT_MS, or bytes that are no HTTP request (a broken
// request line, Content-Length or chunk). fastify's own answer is not the spec's error body.
const CLIENT_ERRORS: Record<string, [status: number, reason: string, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'Request headers are too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'The request was not received in time'],
}
const REQUEST_LINE = /^[A-Z]{1,16} (\/[^\s]{0,2047}) HTTP\/1\.[01]\r?\n/

function answerClientError(err: ConnectionError, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, message] = CLIENT_ERRORS[err.code ?? ''] ?? [400, 'Bad Request', 'Malformed HTTP request']
  // The path when the request line could be read; the rest of the request cannot be trusted.
  // (Node hands over a Buffer, whatever fastify's type says.)
  const raw: unknown = err.rawPacket
  const path = (Buffer.isBuffer(raw) && REQUEST_LINE.exec(raw.subarray(0, 2100).toString('latin1'))?.[1]) || '/'
  const body = JSON.stringify(errorBody(status, path, message))
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
  else socket.destroy()
}

/** Options fixed when the server is constructed; `main` and the tests both use these. */
export function gatewayServerOptions(config: GatewayConfig): FastifyServerOptions {
  const setAnswerHeaders = answerHeaders(config)
  return {
    bodyLimit: config.BODY_LIMIT_BYTES,
    // No request outlives this, whatever it waits on; a placement answers its own 503 before.
    ...requestTimeouts(config),
    // A caller's own x-request-id is kept when it is sane, so its logs and ours line up.
    requestIdHeader: false,
    genReqId: (req) => {
      const own = req.headers['x-request-id']
      return typeof own === 'string' && CALLER_REQUEST_ID.test(own) ? own : randomUUID()
    },
    logger: loggerOptions(config.LOG_LEVEL),
    ...quietRequests,
    // Off by default: the socket address is the client, so X-Forwarded-For cannot pick the
    // address the 401 limit counts. Behind a proxy, TRUST_PROXY names it (docs/contracts.md).
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // A request that still arrives while the gateway stops is served, its answer closing the
    // connection (fastify's 503 is not the spec's error body; handler-deadline.ts drains the rest).
    return503OnClosing: false,
    clientErrorHandler: answerClientError,
    // A path the router cannot read (broken percent-encoding, a segment past maxParamLength, such
    // as a 300-character id) names no resource: the not-found answer of any unknown path, in the
    // spec's body, where fastify would send its own body (and a 414) past the error handler.
    frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const known = err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      const status = known ? 404 : 500
      const message = known ? `Cannot ${request.method} ${request.url.split('?')[0]}` : 'Internal server error'
      if (!known) request.log.error({ err }, 'unhandled framework error')
      setAnswerHeaders(request, reply)
      void reply.code(status).send(errorBody(status, request.url, message, { request_id: request.id }))
    },
  }
}
