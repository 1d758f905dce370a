import type { FastifyRequest, HookHandlerDoneFunction, FastifyReply } from 'fastify'
import type { Sql } from '../../shared/db/sql.js'
import { findCourierByTokenHash, type CourierRow } from '../../shared/db/couriers.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { lookUpCredential, refuseCredential, type AuthFailureLimit } from './auth-failures.js'
import { createCredentialCache, type CredentialCache } from './credential-cache.js'
import { secretHash } from '../../shared/secret-hash.js'

declare module 'fastify' {
  interface FastifyRequest {
    courier: CourierRow
  }
}

// `courier:create` issues `cc_live_` + 32 base62: anything else is refused before any lookup.
const TOKEN_SHAPE = /^cc_live_[0-9A-Za-z]{32}$/
const TOKEN_LENGTH = 40

/** The courier token of an `Authorization: Bearer …` header, or null unless it has the issued shape. */
export function bearerCourierToken(header: string | undefined): string | null {
  if (typeof header !== 'string') return null
  const value = header.trim()
  if (value.slice(0, 6).toLowerCase() !== 'bearer') return null
  const token = value.slice(6).trimStart()
  return token.length === TOKEN_LENGTH && TOKEN_SHAPE.test(token) ? token : null
}

/**
 * Courier tokens by hash, held like API keys (DESIGN 14, `createCredentialCache`): a request in
 * steady state costs no query, nor does a bad token sent again; `courier:disable` announces the
 * revoked hashes and every gateway drops them at once.
 */
export function createCourierTokenCache(sql: Sql, ttlMs: number): CourierTokenCache {
  return createCredentialCache((hash) => findCourierByTokenHash(sql, hash), ttlMs)
}

export type CourierTokenCache = CredentialCache<CourierRow>

/**
 * The courier routes' `onRequest` hook: a courier token or 401 (a business key is no courier
 * token). Failures count per address as for API keys, and past the limit a token not held is
 * the 429 unless it is valid (`lookUpCredential`).
 */
export function requireCourier({ tokens, failures }: { tokens: CourierTokenCache; failures: AuthFailureLimit }) {
  function admit(request: FastifyRequest, reply: FastifyReply, courier: CourierRow | null, done: HookHandlerDoneFunction): void {
    if (!courier) {
      refuseCredential(failures, request, reply, 'Invalid courier token').then(done, done)
      return
    }
    request.courier = courier
    done()
  }
  // A callback hook: a token the cache holds (nearly every ping) is admitted without a promise.
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const token = bearerCourierToken(request.headers.authorization)
    if (token === null) return admit(request, reply, null, done)
    const hash = secretHash(token)
    const held = tokens.held(hash)
    if (held !== undefined) return admit(request, reply, held, done)
    lookUpCredential(failures, request, reply, () => tokens.find(hash)).then((found) => (found instanceof ApiError ? done(found) : admit(request, reply, found, done)), done)
  }
}
