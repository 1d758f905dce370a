import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { withDeadline } from '../../shared/deadline.js'
import { ApiError } from '../../shared/errors/api-error.js'
import { luaScript } from '../../shared/lua-script.js'
import type { RedisClient } from '../../shared/redis.js'
import { secretHash } from '../../shared/secret-hash.js'
import type { CredentialCache } from './credential-cache.js'

const WINDOW_MS = 60_000
// A slow Redis must not slow every refusal down: past this the failure is simply not counted.
const REDIS_DEADLINE_MS = 250

// One round trip: count the failure, start the window on the first one, say how long it has left.
const COUNT_FAILURE = luaScript(`
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { count, redis.call('PTTL', KEYS[1]) }`)

// The same answer without counting: how many so far, and the window's time left. Run for every
// credential not held in memory (by its SHA, as the script above: a few bytes, not the script).
const READ_FAILURES = luaScript(`
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return { count, redis.call('PTTL', KEYS[1]) }`)

/**
 * Counts requests that would be answered 401, per client address and minute, in Redis so every
 * gateway replica shares the count (docs/contracts.md, "Cheap refusals first"). Only failures are counted,
 * so a valid key from the same address is never held back. It fails open: with Redis out of
 * reach, refusals stay plain 401s.
 */
export function createAuthFailureLimit(redis: RedisClient, options: { limit: number; prefix: string }) {
  async function waitOf(script: ReturnType<typeof luaScript>, ip: string, args: number[]): Promise<number | null> {
    if (options.limit === 0) return null
    let reply: unknown
    try {
      reply = await withDeadline(script(redis, [`${options.prefix}:auth-failures:${ip}`], args), REDIS_DEADLINE_MS)
    } catch {
      return null
    }
    if (!Array.isArray(reply)) return null
    const [count, ttl] = reply
    if (typeof count !== 'number' || count <= options.limit) return null
    return Math.max(1, Math.ceil((typeof ttl === 'number' && ttl > 0 ? ttl : WINDOW_MS) / 1000))
  }

  return {
    /** Counts one failure from `ip`: the seconds to wait once it is over the limit, else null. */
    count(ip: string): Promise<number | null> {
      return waitOf(COUNT_FAILURE, ip, [WINDOW_MS])
    },
    /** The seconds `ip` must wait when it is already over the limit, else null; counts nothing. */
    over(ip: string): Promise<number | null> {
      return waitOf(READ_FAILURES, ip, [])
    },
  }
}

export type AuthFailureLimit = ReturnType<typeof createAuthFailureLimit>

/** The answer to an address past its limit: a 429 with the seconds to wait in `retry-after`. */
export function tooManyFailures(reply: FastifyReply, wait: number): ApiError {
  reply.header('retry-after', String(wait))
  return new ApiError(429, `Too many requests, retry in ${wait} seconds`)
}

/** A refused credential, counted against its address: a 401 with `message`, or a 429 once the address is past its limit. */
export async function refuseCredential(failures: AuthFailureLimit, request: FastifyRequest, reply: FastifyReply, message: string): Promise<ApiError> {
  const wait = await failures.count(request.ip)
  return wait === null ? new ApiError(401, message) : tooManyFailures(reply, wait)
}

/**
 * A credential the gateway does not hold in memory, looked up. From an address past its failure
 * limit only a valid one passes (one address is often many clients: an office, a carrier's NAT),
 * and anything else, or a lookup that cannot be made now, is the 429 it would have been.
 */
async function lookUpCredential<T extends object>(failures: AuthFailureLimit, request: FastifyRequest, reply: FastifyReply, find: () => T | null | Promise<T | null>): Promise<T | ApiError | null> {
  const wait = await failures.over(request.ip)
  if (wait === null) return find()
  const found = await Promise.resolve(find()).catch(() => null)
  return found ?? tooManyFailures(reply, wait)
}

/** How one kind of credential (API keys, courier tokens) is read, held and let in. */
export interface CredentialCheck<T> {
  failures: AuthFailureLimit
  cache: CredentialCache<T>
  /** The credential of an `Authorization` header, or null unless it has the issued shape (refused without a lookup). */
  credentialOf: (header: string | undefined) => string | null
  /** The 401's message for a credential missing, malformed or unknown. */
  refusal: string
  /** Lets the request in as `found`, or says why not (a key without the route's scope). */
  admit: (request: FastifyRequest, found: T) => ApiError | null
}

/**
 * The `onRequest` hook of one kind of credential: its shape, its hash in the credential cache,
 * and past the address's failure limit only a valid one (`lookUpCredential`); a refusal is counted
 * against the address (`refuseCredential`). A callback hook: a credential the cache holds (nearly
 * every request) is let in without a promise.
 */
export function requireCredential<T extends object>({ failures, cache, credentialOf, refusal, admit }: CredentialCheck<T>) {
  function settle(request: FastifyRequest, reply: FastifyReply, found: T | null, done: HookHandlerDoneFunction): void {
    if (!found) {
      refuseCredential(failures, request, reply, refusal).then(done, done)
      return
    }
    const refused = admit(request, found)
    if (refused) done(refused)
    else done()
  }
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    const credential = credentialOf(request.headers.authorization)
    if (credential === null) return settle(request, reply, null, done)
    const hash = secretHash(credential)
    const held = cache.held(hash)
    if (held !== undefined) return settle(request, reply, held, done)
    lookUpCredential(failures, request, reply, () => cache.find(hash)).then((found) => (found instanceof ApiError ? done(found) : settle(request, reply, found, done)), done)
  }
}
