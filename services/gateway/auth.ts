import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Sql } from '../../shared/db/sql.js'
import { findActiveKeyByHash, hashApiKey } from '../../shared/db/api-keys.js'
import { ApiError } from '../../shared/errors/api-error.js'

export interface Caller {
  businessId: string
  keyId: string
  scopes: string[]
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller
  }
}

const BEARER = /^bearer\s+(\S+)\s*$/i
// Unknown keys are remembered briefly so a flood of bad keys does not become a flood of queries.
const UNKNOWN_KEY_TTL_MS = 2000
const MAX_ENTRIES = 50_000

interface Entry {
  caller: Caller | null
  expiresAt: number
}

/**
 * API keys by SHA-256 hash, held in memory so a request in steady state costs no query.
 * A revoke reaches this cache through the invalidation bus; the TTL is only the backstop.
 */
export function createKeyCache(sql: Sql, ttlMs: number) {
  const entries = new Map<string, Entry>()
  const loading = new Map<string, Promise<Caller | null>>()

  async function load(hash: string): Promise<Caller | null> {
    const found = await findActiveKeyByHash(sql, hash)
    const caller = found && { businessId: found.businessId, keyId: found.keyId, scopes: found.scopes }
    if (entries.size >= MAX_ENTRIES) entries.clear()
    entries.set(hash, { caller, expiresAt: Date.now() + (caller ? ttlMs : UNKNOWN_KEY_TTL_MS) })
    return caller
  }

  return {
    async find(apiKey: string): Promise<Caller | null> {
      const hash = hashApiKey(apiKey)
      const entry = entries.get(hash)
      if (entry && entry.expiresAt > Date.now()) return entry.caller
      let pending = loading.get(hash)
      if (!pending) {
        pending = load(hash).finally(() => loading.delete(hash))
        loading.set(hash, pending)
      }
      return pending
    },
    clear(): void {
      entries.clear()
    },
  }
}

export type KeyCache = ReturnType<typeof createKeyCache>

/**
 * An `onRequest` hook: it runs before the body is read, so a caller without a valid key
 * learns nothing about body limits or validation.
 */
export function requireScope(keys: KeyCache, scope: string) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const header = request.headers.authorization
    const apiKey = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined
    if (!apiKey) throw new ApiError(401, 'Invalid API key')
    const caller = await keys.find(apiKey)
    if (!caller) throw new ApiError(401, 'Invalid API key')
    if (!caller.scopes.includes(scope)) throw new ApiError(403, 'Insufficient API key scope')
    request.caller = caller
  }
}
