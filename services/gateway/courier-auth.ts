import type { FastifyRequest, HookHandlerDoneFunction, FastifyReply } from 'fastify'
import type { Sql } from '../../shared/db/sql.js'
import { findCourierByTokenHash, type CourierRow } from '../../shared/db/couriers.js'
import { hashApiKey } from '../../shared/db/api-keys.js'
import { LoadCache } from '../../shared/cache.js'
import { refuseCredential, type AuthFailureLimit } from './auth-failures.js'

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
 * Courier tokens by hash, held like API keys (DESIGN 14): a request in steady state costs no
 * query; `courier:disable` announces the revoked hashes and every gateway drops them at once.
 */
export function createCourierTokenCache(sql: Sql, ttlMs: number) {
  const couriers = new LoadCache<string, CourierRow | null>({ max: 50_000, ttlMs, keep: (courier) => courier !== null })
  return {
    find: (hash: string) => couriers.getOrLoad(hash, () => findCourierByTokenHash(sql, hash)),
    clear: () => couriers.clear(),
  }
}

export type CourierTokenCache = ReturnType<typeof createCourierTokenCache>

/** The courier routes' `onRequest` hook: a courier token or 401 (a business key is no courier token); failures count per address as for API keys. */
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
    const found = token === null ? null : tokens.find(hashApiKey(token))
    if (found instanceof Promise) found.then((courier) => admit(request, reply, courier, done), done)
    else admit(request, reply, found, done)
  }
}
