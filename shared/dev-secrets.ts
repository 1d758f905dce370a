import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { projectRoot } from './project-root.js'

/** Where development secrets that must outlive a run are kept (git-ignored, readable by their owner only). */
export const DEV_SECRETS_DIR = path.join(projectRoot, '.dev-secrets')

/** The secret kept in `file`, made by `make` the first time and the same every time after. */
export function devSecret(file: string, make: () => string): string {
  const existing = existingDevSecret(file)
  if (existing !== null) return existing
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const made = make()
  writeFileSync(file, `${made}\n`, { mode: 0o600 })
  return made
}

/** The secret kept in `file` if one was made; never makes one. */
export function existingDevSecret(file: string): string | null {
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : null
}

/**
 * The environment with `name` taken from `file` when it is unset and NODE_ENV is not production,
 * so a one-shot command uses what the development stack uses; with `make`, one is made and kept
 * there first if none is. Production, or nothing kept: the environment as it is (the setting's
 * own check then names what is missing).
 */
export function withDevSecret(env: NodeJS.ProcessEnv, name: string, file: string, make?: () => string): NodeJS.ProcessEnv {
  if (env[name] || env.NODE_ENV === 'production') return env
  const kept = make ? devSecret(file, make) : existingDevSecret(file)
  return kept === null ? env : { ...env, [name]: kept }
}
