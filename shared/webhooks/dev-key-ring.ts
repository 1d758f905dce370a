import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { DEV_SECRETS_DIR, devSecret, withDevSecret } from '../dev-secrets.js'

/** Where `npm start` keeps its development key ring. */
export const DEV_KEY_RING_FILE = path.join(DEV_SECRETS_DIR, 'webhook-secret-keys')

/**
 * The key ring webhook secrets are sealed under when `npm start` is given none. Unlike the
 * per-run tokens it must outlive the run (the endpoints it sealed stay in the database), so it
 * is made once and kept in `.dev-secrets/`. Production passes WEBHOOK_SECRET_KEYS itself.
 */
export function devWebhookSecretKeys(file = DEV_KEY_RING_FILE): string {
  return devSecret(file, () => `dev:${randomBytes(32).toString('base64')}`)
}

/**
 * The environment with WEBHOOK_SECRET_KEYS taken from `npm start`'s ring when it is unset and
 * NODE_ENV is not production, so a one-shot command (`webhooks:reencrypt`) opens what the
 * services under `npm start` sealed. Production, or no ring on disk (a new ring would open nothing
 * stored, so none is made): the environment as it is.
 */
export function withDevWebhookSecretKeys(env: NodeJS.ProcessEnv, file = DEV_KEY_RING_FILE): NodeJS.ProcessEnv {
  return withDevSecret(env, 'WEBHOOK_SECRET_KEYS', file)
}
