import { Redis } from 'ioredis'
import t from 'tap'
import { luaScript } from '../../shared/redis.js'
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
