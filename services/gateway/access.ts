import type { ApiKeyScope } from '../../shared/db/api-keys.js'

/**
 * What an operation does with the business's data, and so which API key scopes it takes
 * (DESIGN 13.2): `read` routes take `orders:read` or `orders:write`; `write` routes (quote,
 * catalog, place, cancel, sandbox advance) take `orders:write`; webhook endpoints and redelivery
 * take `webhooks:write`.
 */
export type Access = 'read' | 'write' | 'webhooks'

export const SCOPES_FOR: Record<Access, readonly ApiKeyScope[]> = {
  read: ['orders:read', 'orders:write'],
  write: ['orders:write'],
  webhooks: ['webhooks:write'],
}

type DocumentedOperations = Record<string, Record<string, { 'x-scopes': readonly ApiKeyScope[] }>>

/**
 * The scopes of each documented operation by fastify's name for its route (`GET
 * /v2/business/orders/:order_id`). The gateway enforces exactly these, so the document and the
 * scope check cannot disagree.
 */
export function documentedScopes(operations: DocumentedOperations): Map<string, readonly ApiKeyScope[]> {
  const scopes = new Map<string, readonly ApiKeyScope[]>()
  for (const [path, methods] of Object.entries(operations)) {
    const url = `/v2${path.replace(/\{(\w+)\}/g, ':$1')}`
    for (const [method, operation] of Object.entries(methods)) scopes.set(`${method.toUpperCase()} ${url}`, operation['x-scopes'])
  }
  return scopes
}
