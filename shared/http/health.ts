import type { FastifyInstance } from 'fastify'
import type { RedisClient } from '../redis.js'
import type { Sql } from '../db/sql.js'
import { withDeadline } from '../deadline.js'

const CHECK_MS = 1000

/** Liveness and readiness; mounted at the root of every service and need no key. */
export default async function healthRoutes(app: FastifyInstance, { sql, redis }: { sql: Sql; redis: RedisClient }) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (_request, reply) => {
    const [postgres, redisUp] = await Promise.all([
      withDeadline(sql`select 1`.then(() => true), CHECK_MS).catch(() => false),
      withDeadline(redis.ping().then(() => true), CHECK_MS).catch(() => false),
    ])
    const ready = postgres && redisUp
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis: redisUp })
  })
}
