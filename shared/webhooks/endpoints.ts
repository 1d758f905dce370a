import type { Sql } from '../db/sql.js'
import { insertEndpointWithin, rotateEndpointSecret, type WebhookEndpoint } from '../db/webhooks.js'
import type { OrderScope } from '../db/orders.js'
import { newWebhookEndpointId, newWebhookSecret } from '../ids.js'
import type { EndpointRequest } from '../schemas/webhook.js'
import type { SecretBox } from './secret-box.js'
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
 * the business has fewer than 10 in this mode. The secret is stored sealed; the endpoint
 * returned carries it readable, for the one answer that shows it.
 */
export async function createEndpoint(sql: Sql, scope: OrderScope, request: EndpointRequest, rules: UrlRules, box: SecretBox): Promise<EndpointCreation> {
  const verdict = await checkWebhookUrl(request.url, rules)
  if (!verdict.ok) return { kind: 'url_refused', message: verdict.message }
  const secret = newWebhookSecret()
  const endpoint = await sql.begin((tx) => insertEndpointWithin(tx, {
    id: newWebhookEndpointId(),
    businessId: scope.businessId,
    livemode: scope.livemode,
    url: request.url,
    eventTypes: request.event_types ?? null,
    description: request.description ?? null,
    secret: box.seal(secret),
  }, MAX_ENDPOINTS))
  if (!endpoint) return { kind: 'limit_reached', message: `A business can have at most ${MAX_ENDPOINTS} webhook endpoints` }
  return { kind: 'created', endpoint: { ...endpoint, secret } }
}

/**
 * A new secret for the endpoint, returned readable; the old one keeps signing for 24 hours, or
 * stops at once with `expirePreviousNow` (a leaked secret). Null when there is no such endpoint.
 */
export async function rotateSecret(sql: Sql, scope: OrderScope, endpointId: string, now: Date, box: SecretBox, expirePreviousNow = false): Promise<WebhookEndpoint | null> {
  const secret = newWebhookSecret()
  const overlapUntil = expirePreviousNow ? now : new Date(now.getTime() + ROTATION_OVERLAP_MS)
  const rotated = await rotateEndpointSecret(sql, endpointId, scope, box.seal(secret), overlapUntil)
  return rotated && { ...rotated, secret, previousSecret: null }
}

/** The endpoint's secrets readable, for signing a delivery. */
export function openSecrets<E extends Pick<WebhookEndpoint, 'secret' | 'previousSecret'>>(endpoint: E, box: SecretBox): E {
  return { ...endpoint, secret: box.open(endpoint.secret), previousSecret: endpoint.previousSecret && box.open(endpoint.previousSecret) }
}
