import type { SessionStore } from '@fastify/session'
import { z } from 'zod'
import { deleteSession, findSession, saveSession } from '../../shared/db/console-sessions.js'
import type { Sql } from '../../shared/db/sql.js'
import { secretHash } from '../../shared/secret-hash.js'

/** What a console session holds: who logged in and one message for the next page (the CSRF secret has its own cookie). */
const sessionDataSchema = z.object({
  userId: z.string().optional(),
  flash: z.object({ kind: z.enum(['ok', 'error']), text: z.string() }).optional(),
})

export type Flash = NonNullable<z.infer<typeof sessionDataSchema>['flash']>

declare module 'fastify' {
  interface Session extends z.infer<typeof sessionDataSchema> {}
}

/**
 * @fastify/session's store over Postgres: every console replica sees every session, and logout
 * or expiry ends it everywhere. Only the fields above are stored, under the hash of the session's
 * id (the cookie holds the id itself); a session lasts `ttlMs` from its last change.
 */
export function postgresSessionStore(sql: Sql, ttlMs: number): SessionStore {
  return {
    set(id, session, done) {
      saveSession(sql, secretHash(id), sessionDataSchema.parse(session), new Date(Date.now() + ttlMs)).then(() => done(), done)
    },
    get(id, done) {
      findSession(sql, secretHash(id)).then((data) => {
        const parsed = sessionDataSchema.safeParse(data)
        done(null, data !== null && parsed.success ? { ...parsed.data, cookie: { originalMaxAge: ttlMs } } : null)
      }, done)
    },
    destroy(id, done) {
      deleteSession(sql, secretHash(id)).then(() => done(), done)
    },
  }
}
