import type { FastifyReply, FastifyRequest } from 'fastify'
import { changeCourierSession, endCourierSession, findCourierSessionById, startCourierSession } from '../../shared/couriers/login.js'
import type { CourierRow } from '../../shared/db/couriers.js'
import type { Sql } from '../../shared/db/sql.js'
import { COURIER_COOKIE, COURIER_PATH, CSRF_COOKIE } from './cookies.js'
import type { Flash } from './session-store.js'

// A rider's session in the courier web app (DESIGN 14): its own signed cookie on /courier, its
// own table, apart from the console users' sessions (cookie on /console): neither kind of session
// is ever sent to, or read by, the other's pages. The CSRF secret has its own cookie on /courier.

/** Extended when a page is opened with less than this much of it gone. */
const EXTEND_AFTER_MS = 5 * 60 * 1000

export interface CourierSession {
  id: string
  courier: CourierRow
  flash: Flash | null
}

declare module 'fastify' {
  interface FastifyRequest {
    courierSession: CourierSession | null
  }
}

export function courierSessions(sql: Sql, options: { ttlMs: number; secure: boolean }) {
  const validS = Math.round(options.ttlMs / 1000)
  const cookieOptions = { path: COURIER_PATH, httpOnly: true, secure: options.secure, sameSite: 'lax' as const, signed: true }
  const setCookie = (reply: FastifyReply, id: string) => reply.setCookie(COURIER_COOKIE, id, { ...cookieOptions, maxAge: validS })

  return {
    /** The request's live session, if its cookie names one of an enabled courier; extended while in use. */
    async load(request: FastifyRequest, reply: FastifyReply): Promise<CourierSession | null> {
      const cookie = request.cookies[COURIER_COOKIE]
      const unsigned = cookie ? request.unsignCookie(cookie) : null
      if (!unsigned?.valid || !unsigned.value) return null
      const found = await findCourierSessionById(sql, unsigned.value)
      if (!found) {
        reply.clearCookie(COURIER_COOKIE, { path: COURIER_PATH })
        return null
      }
      if (request.method === 'GET' && found.expiresAt.getTime() - Date.now() < options.ttlMs - EXTEND_AFTER_MS) {
        await changeCourierSession(sql, unsigned.value, { validS })
        setCookie(reply, unsigned.value)
      }
      return { id: unsigned.value, courier: found.courier, flash: found.flash }
    },

    /** A new session (any earlier one of this browser ended) and a new CSRF secret: nothing planted before login is worth anything after. */
    async start(request: FastifyRequest, reply: FastifyReply, courierId: string): Promise<void> {
      if (request.courierSession) await endCourierSession(sql, request.courierSession.id)
      setCookie(reply, await startCourierSession(sql, courierId, validS))
      reply.clearCookie(CSRF_COOKIE, { path: COURIER_PATH })
    },

    async end(request: FastifyRequest, reply: FastifyReply): Promise<void> {
      if (request.courierSession) await endCourierSession(sql, request.courierSession.id)
      reply.clearCookie(COURIER_COOKIE, { path: COURIER_PATH })
    },

    /** The message the next page shows once (Post/Redirect/Get). */
    async flash(session: CourierSession, flash: Flash | null): Promise<void> {
      await changeCourierSession(sql, session.id, { flash })
    },
  }
}

export type CourierSessions = ReturnType<typeof courierSessions>
