import type { FastifyInstance } from 'fastify'
import type { RedisClient } from '../redis.js'
import type { Sql } from '../db/sql.js'

/** Liveness and readiness; mounted at the root of every service and need no key. */
export default async function healthRoutes(app: FastifyInstance, { sql, redis }: { sql: Sql; redis: RedisClient }) {
  app.get('/healthz', async () => ({ status: 'ok' }))

  app.get('/readyz', async (_request, reply) => {
    const [postgres, redisUp] = await Promise.all([
      withTimeout(sql`select 1`.then(() => true)),
      withTimeout(redis.ping().then(() => true)),
    ])
    const ready = postgres && redisUp
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis: redisUp })
  })
}

async function withTimeout(check: Promise<boolean>, ms = 1000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(false), ms) })
  try {
    return await Promise.race([check.catch(() => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}
