import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import t from 'tap'
import { DependencyDownError, ensureLocalDependencies, redisWhere } from '../../../services/launcher/local-dependencies.js'
import { freePort } from '../../helpers/processes.js'

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

t.test('with both answering, nothing is started', async (t) => {
  t.same(await ensureLocalDependencies({ DATABASE_URL, REDIS_URL }), [])
})

t.test('a local Redis that does not answer is started on its port', async (t) => {
  const port = await freePort()
  t.same(await ensureLocalDependencies({ DATABASE_URL, REDIS_URL: `redis://127.0.0.1:${port}` }), [`Redis was not running; started redis-server on port ${port}`])
  t.teardown(() => promisify(execFile)('redis-cli', ['-p', String(port), 'shutdown', 'nosave']).catch(() => undefined))
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true })
  await redis.connect()
  t.equal(await redis.ping(), 'PONG')
  redis.disconnect()
})

t.test('a local PostgreSQL with no cluster on its port stops the launcher with the command to run', async (t) => {
  const port = await freePort()
  const refusal: unknown = await ensureLocalDependencies({ DATABASE_URL: `postgres://root@127.0.0.1:${port}/courier`, REDIS_URL }).catch((err: unknown) => err)
  t.ok(refusal instanceof DependencyDownError)
  t.match(refusal, { message: `PostgreSQL does not answer at 127.0.0.1:${port}. Start it with: pg_ctlcluster --skip-systemctl-redirect <version> main start (or docker compose up -d postgres)` })
})

t.test('a dependency at another address is not touched', async (t) => {
  // 192.0.2.0/24 is reserved for documentation: nothing answers there and nothing is tried.
  t.same(await ensureLocalDependencies({ DATABASE_URL: 'postgres://root@192.0.2.10:5432/courier', REDIS_URL: 'redis://192.0.2.10:6379' }), [])
})

t.test('where Redis is, as the launcher names it: host and port, never the credentials', async (t) => {
  t.equal(redisWhere({ REDIS_URL: 'redis://courier:s3cret@redis.internal:6380/2' }), 'redis.internal:6380')
  t.equal(redisWhere({ REDIS_URL: 'rediss://:s3cret@redis.internal' }), 'redis.internal:6379')
  t.equal(redisWhere({ REDIS_URL: 'redis://courier:s3cret@ignored', REDIS_CLUSTER_NODES: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }] }), '10.0.0.1:7000,10.0.0.2:7001')
})
