import type { Sql } from '../db/sql.js'
import { insertEndpointWithin, rotateEndpointSecret, type WebhookEndpoint } from '../db/webhooks.js'
import type { OrderScope } from '../db/orders.js'
import { newWebhookEndpointId, newWebhookSecret } from '../ids.js'
import type { EndpointRequest } from '../schemas/webhook.js'
import { checkWebhookUrl, type UrlRules } from './url-rules.js'

export const MAX_ENDPOINTS = 10
// After a rotation the old secret signs alongside the new one this long.
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000

export type EndpointCreation =
  | { kind: 'created'; endpoint: WebhookEndpoint }
  | { kind: 'url_refused'; message: string }
  | { kind: 'limit_reached'; message: string }

/**
 * Registers an endpoint with a fresh `whsec_` secret, once its URL passes the rules and while
 * the business has fewer than 10 in this mode.
 */
export async function createEndpoint(sql: Sql, scope: OrderScope, request: EndpointRequest, rules: UrlRules): Promise<EndpointCreation> {
  const verdict = await checkWebhookUrl(request.url, rules)
  if (!verdict.ok) return { kind: 'url_refused', message: verdict.message }
  const endpoint = await sql.begin((tx) => insertEndpointWithin(tx, {
    id: newWebhookEndpointId(),
    businessId: scope.businessId,
    livemode: scope.livemode,
    url: request.url,
    eventTypes: request.event_types ?? null,
    description: request.description ?? null,
    secret: newWebhookSecret(),
  }, MAX_ENDPOINTS))
  if (!endpoint) return { kind: 'limit_reached', message: `A business can have at most ${MAX_ENDPOINTS} webhook endpoints` }
  return { kind: 'created', endpoint }
}

/** A new secret for the endpoint; the old one keeps signing for 24 hours. Null when there is no such endpoint. */
export async function rotateSecret(sql: Sql, scope: OrderScope, endpointId: string, now: Date): Promise<WebhookEndpoint | null> {
  return rotateEndpointSecret(sql, endpointId, scope, newWebhookSecret(), new Date(now.getTime() + ROTATION_OVERLAP_MS))
}
