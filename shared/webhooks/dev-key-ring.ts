import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// The project root sits above both shared/ (ts) and dist/shared/ (js).
const here = fileURLToPath(import.meta.url)
const projectRoot = path.resolve(path.dirname(here), here.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..')

/** Where `npm start` keeps its development key ring (git-ignored, readable by its owner only). */
export const DEV_KEY_RING_FILE = path.join(projectRoot, '.dev-secrets', 'webhook-secret-keys')

/**
 * The key ring webhook secrets are sealed under when `npm start` is given none. Unlike the
 * per-run tokens it must outlive the run (the endpoints it sealed stay in the database), so it
 * is made once and kept in `.dev-secrets/`. Production passes WEBHOOK_SECRET_KEYS itself.
 */
export function devWebhookSecretKeys(file = DEV_KEY_RING_FILE): string {
  const existing = existingDevWebhookSecretKeys(file)
  if (existing !== null) return existing
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const ring = `dev:${randomBytes(32).toString('base64')}`
  writeFileSync(file, `${ring}\n`, { mode: 0o600 })
  return ring
}

/** The development key ring if `npm start` made one; never makes one (a new ring opens nothing stored). */
export function existingDevWebhookSecretKeys(file = DEV_KEY_RING_FILE): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null
}

/**
 * The environment with WEBHOOK_SECRET_KEYS taken from `npm start`'s ring when it is unset and
 * NODE_ENV is not production, so a one-shot command (`webhooks:reencrypt`) opens what the
 * services under `npm start` sealed. Production, or no ring on disk: the environment as it is.
 */
export function withDevWebhookSecretKeys(env: NodeJS.ProcessEnv, file = DEV_KEY_RING_FILE): NodeJS.ProcessEnv {
  if (env.WEBHOOK_SECRET_KEYS || env.NODE_ENV === 'production') return env
  const ring = existingDevWebhookSecretKeys(file)
  return ring === null ? env : { ...env, WEBHOOK_SECRET_KEYS: ring }
}
