import { timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { ApiError } from '../errors/api-error.js'

/** The `Authorization` value an internal caller sends. */
export function internalAuthorization(token: string): string {
  return `Bearer ${token}`
}

/**
 * An `onRequest` hook for internal routes: only a caller holding `INTERNAL_TOKEN` gets in,
 * anyone else a 401 before any body is read. A value of the right length is compared in
 * constant time, so the answer's timing says nothing about how much of a guess was right. Only
 * the length can be timed, and knowing it leaves a random token of 16 characters or more as hard
 * to guess. No hash and no promise: this runs on every quote (docs/performance.md).
 */
export function requireInternalToken(token: string) {
  const expected = Buffer.from(internalAuthorization(token))
  const holds = (sent: string | undefined) => typeof sent === 'string' && Buffer.byteLength(sent) === expected.length && timingSafeEqual(Buffer.from(sent), expected)
  return function internalOnly(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
    done(holds(request.headers.authorization) ? undefined : new ApiError(401, 'Invalid internal token'))
  }
}
