import { setTimeout as sleep } from 'node:timers/promises'
import type { BatchObservableResult, ObservableResult } from '@opentelemetry/api'
import type { FastifyInstance } from 'fastify'
import type { RedisClient } from '../redis.js'
import type { Sql } from '../db/sql.js'
import { poolSessions, type PoolSessions } from '../db/pool.js'
import { withDeadline } from '../deadline.js'
import { instruments } from '../telemetry/metrics.js'

const CHECK_MS = 1000

/**
 * Liveness and readiness; mounted at the root of every service and need no key. A service is
 * ready when what it cannot work without answers: Postgres always, Redis only for a service
 * that needs it (the worker's queue). The body reports both either way. The same check feeds
 * each scrape's `courier_ready` and `courier_dependency_up{dependency}`, and each pool (the
 * primary's, and the replica's when `reads` is one) reports `courier_db_pool_connections{pool,state}`
 * beside `courier_db_pool_max{pool}`.
 */
export default async function healthRoutes(
  app: FastifyInstance,
  { sql, reads, redis, needsRedis, taking }: { sql: Sql; reads?: Sql; redis: RedisClient; needsRedis: boolean; taking?: () => boolean },
) {
  const look = async () => {
    const [postgres, redisUp] = await Promise.all([
      withDeadline(sql`select 1`.then(() => true), CHECK_MS).catch(() => false),
      withDeadline(redis.ping().then(() => true), CHECK_MS).catch(() => false),
    ])
    return { ready: postgres && (redisUp || !needsRedis), postgres, redis: redisUp }
  }
  // One look a second at most, shared by whoever asks meanwhile: /readyz is reachable wherever the
  // service's port is (the gateway's Ingress serves its root), and a flood of it must not become
  // a flood of queries. Probes, every few seconds, always get a look at most a second old.
  let last: { at: number; state: ReturnType<typeof look> } | null = null
  const check = () => {
    if (last === null || Date.now() - last.at >= CHECK_MS) last = { at: Date.now(), state: look() }
    return last.state
  }

  // Alive, unless a queue worker has stopped taking due jobs (shared/queue-liveness.ts): then a
  // restart is what brings it back, and the launcher and Kubernetes restart on this answer.
  app.get('/healthz', async (_request, reply) => {
    if (taking && !taking()) return reply.code(503).send({ status: 'stuck', reason: 'jobs are due and this worker has started none' })
    return { status: 'ok' }
  })

  app.get('/readyz', async (_request, reply) => {
    const { ready, postgres, redis: redisUp } = await check()
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', postgres, redis: redisUp })
  })

  const { meter } = instruments()
  const readyGauge = meter.createObservableGauge('courier_ready', { description: '1 when the service is ready (its /readyz answers 200), else 0' })
  const upGauge = meter.createObservableGauge('courier_dependency_up', { description: '1 when the dependency (postgres, redis) answered a check within a second, else 0' })
  const observeHealth = async (result: BatchObservableResult) => {
    const state = await check()
    result.observe(readyGauge, state.ready ? 1 : 0)
    result.observe(upGauge, state.postgres ? 1 : 0, { dependency: 'postgres' })
    result.observe(upGauge, state.redis ? 1 : 0, { dependency: 'redis' })
  }

  const poolGauge = meter.createObservableGauge('courier_db_pool_connections', { description: 'Postgres sessions of the service\'s pools, by pool (primary; replica with DATABASE_READ_URL) and state (busy: running a statement or in a transaction, this count\'s own left out; open)' })
  const poolMax = meter.createObservableGauge('courier_db_pool_max', { description: 'The most sessions each of the service\'s pools opens, by pool' })
  // The replica's pool (DESIGN 16) is watched as the primary's: either can run out on its own.
  const pools = reads && reads !== sql ? [{ pool: 'primary', of: sql }, { pool: 'replica', of: reads }] : [{ pool: 'primary', of: sql }]
  // A pool that cannot answer within a second is counted full: every session is held. A pool
  // whose database is gone observes nothing, so the gauge keeps its last reading (the SDK's
  // gauges do): courier_dependency_up says the database is gone, and PostgresPoolExhausted
  // defers to it.
  const observePool = async (result: ObservableResult) => {
    await Promise.all(pools.map(async ({ pool, of }) => {
      const max = of.options.max
      const full: PoolSessions = { busy: max, open: max }
      const sessions = await Promise.race([poolSessions(of), sleep(CHECK_MS, full, { ref: false })]).catch(() => null)
      if (!sessions) return
      result.observe(sessions.busy, { pool, state: 'busy' })
      result.observe(sessions.open, { pool, state: 'open' })
    }))
  }
  const observeMax = (result: ObservableResult) => {
    for (const { pool, of } of pools) result.observe(of.options.max, { pool })
  }

  meter.addBatchObservableCallback(observeHealth, [readyGauge, upGauge])
  poolGauge.addCallback(observePool)
  poolMax.addCallback(observeMax)
  app.addHook('onClose', async () => {
    meter.removeBatchObservableCallback(observeHealth, [readyGauge, upGauge])
    poolGauge.removeCallback(observePool)
    poolMax.removeCallback(observeMax)
  })
}
