import { Cluster, Redis } from 'ioredis'
import t from 'tap'
import { commonEnv, loadConfig } from '../../shared/config.js'
import { luaScript } from '../../shared/lua-script.js'
import { createRedis } from '../../shared/redis.js'
import { startOwnRedis } from '../helpers/processes.js'

// Hot-path scripts run by their SHA-1 and load themselves again when Redis has forgotten them
// (a restart, SCRIPT FLUSH): on a Redis of the test's own, so the flush touches nobody else.
t.test('a Lua script runs by SHA, and again after Redis forgets it', async (t) => {
  const own = await startOwnRedis(t)
  const redis = new Redis(own.url)
  t.teardown(() => redis.disconnect())
  const double = luaScript("return tonumber(ARGV[1]) * 2 + redis.call('INCR', KEYS[1])")
  t.equal(await double(redis, ['n'], [20]), 41, 'first call: loaded and run')
  t.equal(await double(redis, ['n'], [20]), 42, 'then by its SHA')
  await redis.script('FLUSH')
  t.equal(await double(redis, ['n'], [20]), 43, 'after SCRIPT FLUSH: loaded again, no error')
  await t.rejects(luaScript('return redis.call("NOPE")')(redis, [], []), /Unknown Redis command|unknown command/i, 'a script error is not mistaken for NOSCRIPT')
})

// DESIGN 16: REDIS_CLUSTER_NODES set means a Redis Cluster, unset the one Redis at REDIS_URL;
// every key shares QUEUE_PREFIX's hash tag, so a prefix without one is refused.
t.test('REDIS_CLUSTER_NODES picks a Cluster client; QUEUE_PREFIX must carry a hash tag', async (t) => {
  const config = loadConfig(commonEnv, { REDIS_URL: 'redis://app:s%40cret@127.0.0.1:6390', REDIS_CLUSTER_NODES: 'redis-a:7000, redis-b:7001' })
  t.same(config.REDIS_CLUSTER_NODES, [{ host: 'redis-a', port: 7000 }, { host: 'redis-b', port: 7001 }])
  const cluster = createRedis(config, { lazyConnect: true })
  t.ok(cluster instanceof Cluster, 'a Cluster client')
  if (cluster instanceof Cluster) t.match(cluster.options.redisOptions, { username: 'app', password: 's@cret' }, "REDIS_URL's user and password go to every node")
  cluster.disconnect()
  const single = createRedis(loadConfig(commonEnv, {}), { lazyConnect: true })
  t.ok(single instanceof Redis && !(single instanceof Cluster), 'unset: one Redis')
  single.disconnect()
  t.throws(() => loadConfig(commonEnv, { REDIS_CLUSTER_NODES: 'redis-a' }), /REDIS_CLUSTER_NODES.*host:port/)
  t.throws(() => loadConfig(commonEnv, { QUEUE_PREFIX: 'courier' }), /QUEUE_PREFIX: must carry a \{…\} hash tag/)
  t.equal(loadConfig(commonEnv, { QUEUE_PREFIX: '{eu}:courier' }).QUEUE_PREFIX, '{eu}:courier')
})
