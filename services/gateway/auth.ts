import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Sql } from '../../shared/db/sql.js'
import { findActiveKeyByHash, type ApiKeyScope } from '../../shared/db/api-keys.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { SCOPES_FOR } from './access.js'
import { requireCredential, type AuthFailureLimit } from './auth-failures.js'
import { createCredentialCache, type CredentialCache } from './credential-cache.js'

export interface Caller {
  businessId: string
  keyId: string
  scopes: string[]
  /** False for a sandbox key: the caller sees and makes test data only. */
  livemode: boolean
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller
  }
  interface FastifyContextConfig {
    /** The scopes this route takes, any one of them; set from the OpenAPI document (app.ts). */
    scopes?: readonly ApiKeyScope[]
  }
}

// The shape `key:create` issues. Anchored, no quantifier can overlap another: one pass over at
// most 40 characters, and a value of any other length never reaches it.
const KEY_SHAPE = /^ck_(?:live|test)_[0-9A-Za-z]{32}$/
const KEY_LENGTH = 40

/** API keys by SHA-256 hash (`createCredentialCache`): a request in steady state costs no query. */
export function createKeyCache(sql: Sql, ttlMs: number, bounds?: { valid: number; unknown: number }): KeyCache {
  return createCredentialCache(async (hash) => {
    const found = await findActiveKeyByHash(sql, hash)
    return found && { businessId: found.businessId, keyId: found.keyId, scopes: found.scopes, livemode: found.livemode }
  }, ttlMs, bounds)
}

export type KeyCache = CredentialCache<Caller>

/**
 * The API key of an `Authorization: Bearer <key>` header (scheme in any case), or null unless
 * the key has the issued shape. Plain code, linear in the header: a malformed value is refused
 * here, before the key cache and without a Postgres query.
 */
export function bearerKey(header: string | undefined): string | null {
  if (typeof header !== 'string') return null
  const value = header.trim()
  if (value.slice(0, 6).toLowerCase() !== 'bearer') return null
  const key = value.slice(6).trimStart()
  if (key.length === value.length - 6) return null
  return key.length === KEY_LENGTH && KEY_SHAPE.test(key) ? key : null
}

/**
 * An `onRequest` hook: it runs before the body is read, so a caller without a valid key
 * learns nothing about body limits or validation. A request that would be 401 is counted per
 * client address; past `AUTH_FAILURE_LIMIT` it is a 429 instead, with the per-key limit's body.
 * Only those: a valid key from an address past its limit works (DESIGN 7), held by this gateway
 * or not (a restart, another replica, an expired entry), since one address is often many
 * clients (an office, a carrier's NAT). An unknown key is looked up once and then held as
 * unknown, so a flood of one bad key costs one query; with Postgres out of reach, a key not held
 * from such an address is still the 429.
 * One hook for both credentials (`requireCredential`): the same as courier tokens get.
 */
export function requireKey({ keys, failures }: { keys: KeyCache; failures: AuthFailureLimit }) {
  return requireCredential({
    failures, cache: keys, credentialOf: bearerKey, refusal: 'Invalid API key',
    admit: (request, caller) => {
      request.caller = caller
      return null
    },
  })
}

/**
 * The key's scopes against the route's: after the rate limit, so a key's refused calls count
 * against its budget (and carry its RateLimit headers) as its others do.
 */
export function requireScope(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  // Every /v2 route has its scopes from the document (the onRoute hook of app.ts); the strictest
  // business scope stands in only where a route would have none.
  const accepted: readonly string[] = request.routeOptions.config.scopes ?? SCOPES_FOR.write
  done(request.caller.scopes.some((scope) => accepted.includes(scope)) ? undefined : new ApiError(403, 'Insufficient API key scope'))
}
