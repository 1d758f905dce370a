import { LRUCache } from 'lru-cache'
import { Webhook } from 'standardwebhooks'
import type { WebhookEndpoint } from '../db/webhooks.js'

// A `Webhook` decodes its secret's key when it is made: one per secret in use (every endpoint a
// busy sender delivers to, with their rotations), not one per signature.
const signers = new LRUCache<string, Webhook>({ max: 1000, memoMethod: (secret) => new Webhook(secret) })
const signerOf = (secret: string): Webhook => signers.memo(secret)

/**
 * The Standard Webhooks headers of one attempt: `webhook-id` is the event id (the same on every
 * retry), `webhook-timestamp` this attempt's Unix seconds, and `webhook-signature` one `v1,…`
 * per secret in force: the current one, and during a rotation's overlap the previous one too.
 * Signed by the `standardwebhooks` package itself, so any receiver using it verifies.
 */
export function signedHeaders(endpoint: Pick<WebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>, eventId: string, body: string, now: Date): Record<string, string> {
  const current = signerOf(endpoint.secret).sign(eventId, now, body)
  const previous = endpoint.previousSecret && endpoint.previousSecretExpiresAt && endpoint.previousSecretExpiresAt > now
    ? signerOf(endpoint.previousSecret).sign(eventId, now, body)
    : null
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': previous === null ? current : `${current} ${previous}`,
    'content-type': 'application/json',
    'user-agent': 'courier-webhooks/1',
  }
}
