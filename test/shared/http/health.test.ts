import Fastify from 'fastify'
import { Redis } from 'ioredis'
import t from 'tap'
import healthRoutes from '../../../shared/http/health.js'
import { useTestDb } from '../../helpers/db.js'
import { startOwnRedis, waitForValue } from '../../helpers/processes.js'

t.test('readiness needs Redis only where the service cannot work without it', async (t) => {
  const db = await useTestDb(t)
  // Its own Redis, so stopping it leaves the shared one to the other tests.
  const own = await startOwnRedis(t)
  const redis = new Redis(own.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false })
  redis.on('error', () => {})
  t.teardown(() => redis.disconnect())

  const serviceNeeding = async (needsRedis: boolean) => {
    const app = Fastify()
    await app.register(healthRoutes, { sql: db.sql, redis, needsRedis })
    t.teardown(() => app.close())
    return app
  }
  const gatewayLike = await serviceNeeding(false)
  const workerLike = await serviceNeeding(true)

  const up = await waitForValue(async () => (await workerLike.inject('/readyz')).statusCode, (code) => code === 200, 10_000)
  t.equal(up.value, 200, 'the worker is ready with Postgres and Redis')
  t.same((await gatewayLike.inject('/readyz')).json(), { status: 'ready', postgres: true, redis: true })

  await own.stop()
  const workerDown = await waitForValue(async () => (await workerLike.inject('/readyz')).json(), (body) => body.redis === false, 10_000)
  t.same(workerDown.value, { status: 'unavailable', postgres: true, redis: false }, 'the worker is not ready without its queue')
  // A look at most a second old: the gateway's may still be the one before Redis went.
  const gatewayDown = await waitForValue(() => gatewayLike.inject('/readyz'), (answer) => answer.json().redis === false, 10_000)
  t.equal(gatewayDown.value.statusCode, 200, 'gateway and pricing stay ready without Redis')
  t.same(gatewayDown.value.json(), { status: 'ready', postgres: true, redis: false }, 'the body still reports Redis')
})

t.test('a flood of /readyz costs one look a second, not one a request', async (t) => {
  const db = await useTestDb(t)
  const own = await startOwnRedis(t)
  const redis = new Redis(own.url, { maxRetriesPerRequest: 0 })
  t.teardown(() => redis.disconnect())
  const app = Fastify()
  await app.register(healthRoutes, { sql: db.sql, redis, needsRedis: false })
  t.teardown(() => app.close())
  const pings = async () => Number(/cmdstat_ping:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0)
  const before = await pings()
  const started = Date.now()
  const answers = await Promise.all(Array.from({ length: 300 }, () => app.inject('/readyz')))
  const seconds = Math.ceil((Date.now() - started) / 1000)
  t.ok(answers.every((answer) => answer.statusCode === 200), 'every one answered ready')
  const looks = (await pings()) - before
  t.ok(looks >= 1 && looks <= seconds + 1, `${looks} looks for 300 requests over ${seconds} s`)
})
