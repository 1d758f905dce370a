import { Webhook } from 'standardwebhooks'
import type { WebhookEndpoint } from '../db/webhooks.js'

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event id (the same on every
 * retry), `webhook-timestamp` this attempt's Unix seconds, and `webhook-signature` one `v1,…`
 * per secret in force: the current one, and during a rotation's overlap the previous one too.
 * Signed by the `standardwebhooks` package itself, so any receiver using it verifies.
 */
export function signedHeaders(endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, eventId: string, body: string, now: Date): Record<string, string> {
  const secrets = [endpoint.secret]
  if (endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now) secrets.push(endpoint.previousSecret)
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(eventId, now, body)).join(' '),
    'content-type': 'application/json',
    'user-agent': 'courier-webhooks/1',
  }
}
