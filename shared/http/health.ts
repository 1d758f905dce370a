import type { FastifyInstance } from 'fastify'
import type { RedisClient } from '../redis.js'
import type { Sql } from '../db/sql.js'
import { withDeadline } from '../deadline.js'

const CHECK_MS = 1000

/**
 * Liveness and readiness; mounted at the root of every service and need no key. A service is
 * ready when what it cannot work without answers: Postgres always, Redis only for a service
 * that needs it (the worker's queue). The body reports both either way.
 */
export default async function healthRoutes(
  app: FastifyInstance,
  { sql, redis, needsRedis }: { sql: Sql; redis: RedisClient; needsRedis: boolean },
) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (_request, reply) => {
    const [postgres, redisUp] = await Promise.all([
      withDeadline(sql`select 1`.then(() => true), CHECK_MS).catch(() => false),
      withDeadline(redis.ping().then(() => true), CHECK_MS).catch(() => false),
    ])
    const ready = postgres && (redisUp || !needsRedis)
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis: redisUp })
  })
}
