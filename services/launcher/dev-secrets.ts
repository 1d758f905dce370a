import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { projectRoot } from './scripts.js'

/**
 * The key ring webhook secrets are sealed under when `npm start` is given none. Unlike the
 * per-run tokens it must outlive the run (the endpoints it sealed stay in the database), so it
 * is made once and kept in `.dev-secrets/` (git-ignored, readable by its owner only).
 * Production passes WEBHOOK_SECRET_KEYS itself.
 */
export function devWebhookSecretKeys(file = path.join(projectRoot, '.dev-secrets', 'webhook-secret-keys')): string {
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const ring = `dev:${randomBytes(32).toString('base64')}`
  writeFileSync(file, `${ring}\n`, { mode: 0o600 })
  return ring
}
