import { LRUCache } from 'lru-cache'
import { LoadCache } from '../../shared/cache.js'

// Unknown credentials are remembered briefly, so one bad credential sent again and again is one query.
const UNKNOWN_TTL_MS = 2000
const MAX_ENTRIES = 50_000
const MAX_UNKNOWN_ENTRIES = 10_000

export interface CredentialCache<T> {
  /** What a credential's hash stands for as held in memory: null for one known to be unknown, undefined when not held. */
  held(hash: string): T | null | undefined
  /** What it stands for (null: no such active credential), at once when the cache holds the answer. */
  find(hash: string): T | null | Promise<T | null>
  /** Forgets what these hashes stand for (revoked): the rest stays held. */
  drop(hashes: readonly string[]): void
  /** Forgets every held credential whose value matches, and any lookup in flight (its answer may be stale). */
  dropWhere(matches: (value: T) => boolean): void
  clear(): void
}

/**
 * Credentials (API keys, courier tokens) by SHA-256 hash, held in memory so a request in steady
 * state costs no query. Valid and unknown ones are held apart: a flood of made-up credentials
 * fills only its own bounded list and never evicts a valid one. A revoke reaches the cache through
 * the invalidation bus (`clear`); the TTL is only the backstop.
 */
export function createCredentialCache<T extends object>(load: (hash: string) => Promise<T | null>, ttlMs: number, bounds = { valid: MAX_ENTRIES, unknown: MAX_UNKNOWN_ENTRIES }): CredentialCache<T> {
  const known = new LoadCache<string, T | null>({ max: bounds.valid, ttlMs, keep: (found) => found !== null })
  const unknown = new LRUCache<string, true>({ max: bounds.unknown, ttl: UNKNOWN_TTL_MS })

  async function loadAndMark(hash: string): Promise<T | null> {
    const found = await load(hash)
    if (found === null) unknown.set(hash, true)
    return found
  }

  return {
    held: (hash) => (unknown.has(hash) ? null : known.peek(hash)),
    find: (hash) => (unknown.has(hash) ? null : known.getOrLoad(hash, () => loadAndMark(hash))),
    drop: (hashes) => {
      for (const hash of hashes) known.delete(hash)
    },
    dropWhere: (matches) => known.deleteWhere((value) => value === undefined || (value !== null && matches(value))),
    clear: () => {
      known.clear()
      unknown.clear()
    },
  }
}
