import { ref, type SchemaName } from './components.js'
import { refusal } from './examples.js'

/*
 * The answers every operation shares: the refusals (each the spec's error body) and the headers.
 * An operation lists the refusals of what it does itself (a 404, a 409…); the document adds those
 * every route of its kind answers (`withRefusalsOfKind`), so no operation can forget one.
 */

const header = (description: string, schema: Record<string, unknown>) => ({ description, schema })

export const headers = {
  RequestId: header('Identifies this request in the logs; also in every error body as request_id', { type: 'string' }),
  RateLimitLimit: header('Requests allowed per window for this key (when rate limiting is on)', { type: 'integer' }),
  RateLimitRemaining: header('Requests left in the current window', { type: 'integer' }),
  RateLimitReset: header('Seconds until the window resets', { type: 'integer' }),
  RetryAfter: header('Seconds to wait before retrying', { type: 'integer' }),
  IdempotentReplayed: header('"true" when this answer is the stored answer of an earlier request with the same Idempotency-Key', { type: 'string', enum: ['true'] }),
}

const headerRef = (name: keyof typeof headers) => ({ $ref: `#/components/headers/${name}` })

/** The header of every answer, limited or not. */
export const requestIdHeader = { 'x-request-id': headerRef('RequestId') }

/** Headers of every answer of the rate-limited /v2 routes. */
export const commonHeaders = {
  ...requestIdHeader,
  'ratelimit-limit': headerRef('RateLimitLimit'),
  'ratelimit-remaining': headerRef('RateLimitRemaining'),
  'ratelimit-reset': headerRef('RateLimitReset'),
}

const PATH = '/v2/business/order/cost'

const refusals = {
  400: { name: 'BadRequest', description: 'The request is invalid; `errors` lists every violation with its field (and `[index]` in a list body)', example: refusal(400, PATH, 'weight must not be less than 0.1', { errors: [{ field: 'weight', message: 'weight must not be less than 0.1' }] }) },
  401: { name: 'Unauthorized', description: 'Missing, malformed, unknown or revoked API key', example: refusal(401, PATH, 'Invalid API key') },
  403: { name: 'Forbidden', description: 'The key lacks the scope this operation needs', example: refusal(403, PATH, 'Insufficient API key scope') },
  404: { name: 'NotFound', description: 'No such object for this business in this mode (live or test)', example: refusal(404, '/v2/business/orders/ORD-7K2M9QXH4T', 'Order ORD-7K2M9QXH4T was not found') },
  409: { name: 'Conflict', description: 'The object is not in a state that allows this', example: refusal(409, '/v2/business/orders/ORD-7K2M9QXH4T/cancel', 'ORD-7K2M9QXH4T can no longer be cancelled: it was picked up') },
  410: { name: 'Gone', description: 'The link has expired: ask for a new one', example: refusal(410, '/v2/proof-photos/cHJvb2Yv…/1795624220/EXhy7t…', "This photo link has expired: GET the order's photo_url again for a new one") },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than the configured limit', example: refusal(413, PATH, 'Request body is larger than 1048576 bytes') },
  415: { name: 'UnsupportedMediaType', description: 'The body is not application/json', example: refusal(415, PATH, 'Content-Type must be application/json') },
  422: { name: 'IdempotencyMismatch', description: 'The Idempotency-Key was used before with a different body', example: refusal(422, '/v2/business/order', 'Idempotency-Key was already used with a different request body') },
  429: { name: 'TooManyRequests', description: 'Rate limited, or too many failed authentications; retry after Retry-After seconds', example: refusal(429, PATH, 'Too many requests, retry in 12 seconds') },
  503: { name: 'ServiceUnavailable', description: 'A dependency is out of reach; nothing was changed, retry shortly', example: refusal(503, PATH, 'Service temporarily unavailable, retry shortly') },
} as const

export type RefusalStatus = keyof typeof refusals

/** `components.responses`: one named answer per refusal status. */
export function refusalResponses() {
  return Object.fromEntries(Object.entries(refusals).map(([status, { name, description, example }]) => [name, {
    description,
    // A refused credential names no caller whose budget it could count against.
    headers: status === '429' ? { ...commonHeaders, 'retry-after': headerRef('RetryAfter') } : status === '401' ? requestIdHeader : commonHeaders,
    content: { 'application/json': { schema: ref('Error'), example } },
  }]))
}

const refusalRef = (status: RefusalStatus) => ({ $ref: `#/components/responses/${refusals[status].name}` })

/** The refusals an operation answers for what it does itself; those of its kind are added to it. */
export function refusalsOf(...statuses: RefusalStatus[]) {
  return Object.fromEntries(statuses.map((status) => [String(status), refusalRef(status)]))
}

// fastify reads a body on these, whatever the route does with it: `{` is a 400, text/plain a 415,
// a body past BODY_LIMIT_BYTES a 413, before the handler runs.
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete'])

interface OperationShape {
  security?: unknown[]
  'x-scopes': readonly string[]
  parameters?: ReadonlyArray<{ in: string }>
  responses: Record<string, unknown>
}

/** What every route of this kind can answer, whatever it does (docs/contracts.md section 1). */
function refusalsOfKind(method: string, operation: OperationShape, security: unknown[]): RefusalStatus[] {
  const kind: RefusalStatus[] = [503]
  // The rate limits count by API key or courier token: a route that takes neither (a signed photo
  // link) is not limited.
  if (security.length > 0) kind.push(401, 429)
  if (operation['x-scopes'].length > 0) kind.push(403)
  // A route that reads its query refuses an unknown, repeated or invalid parameter.
  if (operation.parameters?.some((parameter) => parameter.in === 'query')) kind.push(400)
  if (BODY_METHODS.has(method)) kind.push(400, 413, 415)
  return kind
}

/**
 * The paths with every operation's responses completed by the refusals of its kind, in status
 * order: /docs lists every status a route can answer. `security` is the document's default.
 */
export function withRefusalsOfKind(paths: Record<string, Record<string, OperationShape>>, security: unknown[]) {
  return Object.fromEntries(Object.entries(paths).map(([path, methods]) => [path, Object.fromEntries(Object.entries(methods).map(([method, operation]) => {
    const responses: Record<string, unknown> = { ...operation.responses }
    // Status keys are integer-like, so the object lists them in status order whatever the order added.
    for (const status of refusalsOfKind(method, operation, operation.security ?? security)) responses[status] ??= refusalRef(status)
    return [method, { ...operation, responses }]
  }))]))
}

/** A JSON answer with the common headers. */
export function answer(description: string, schema: SchemaName, example: unknown, extraHeaders: Record<string, unknown> = {}) {
  return { description, headers: { ...commonHeaders, ...extraHeaders }, content: { 'application/json': { schema: ref(schema), example } } }
}

export const replayedHeader = { 'idempotent-replayed': headerRef('IdempotentReplayed') }
