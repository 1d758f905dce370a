import type { Sql } from '../../shared/db/sql.js'
import { findCourierByTokenHash, type CourierRow } from '../../shared/db/couriers.js'
import { requireCredential, type AuthFailureLimit } from './auth-failures.js'
import { createCredentialCache, type CredentialCache } from './credential-cache.js'

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
 * the 429 unless it is valid (`requireCredential`, the hook API keys get).
 */
export function requireCourier({ tokens, failures }: { tokens: CourierTokenCache; failures: AuthFailureLimit }) {
  return requireCredential({
    failures, cache: tokens, credentialOf: bearerCourierToken, refusal: 'Invalid courier token',
    admit: (request, courier) => {
      request.courier = courier
      return null
    },
  })
}
