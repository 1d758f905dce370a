import t from 'tap'
import { TEST_DATABASE_URL } from '../helpers/db.js'
import { ANSWERS_BEFORE_FAULT, assertSettled, CLIENTS, seenCount, serviceExits, startScenario } from '../helpers/fault-scenario.js'
import { startOwnRedis, waitFor } from '../helpers/processes.js'

// Redis restarted without persistence loses every queued job and idempotency hint; the pending
// rows they leave are settled not processed, and the clients' retries place anew (docs/contracts.md).
t.test('Redis restart without persistence under 110 retrying clients', async (t) => {
  const redis = await startOwnRedis(t)
  const scenario = await startScenario(t, { databaseUrl: TEST_DATABASE_URL, redisUrl: redis.url })
  const { swarm } = scenario

  t.ok(await waitFor(() => swarm.finished() >= ANSWERS_BEFORE_FAULT, 30000), 'placements are under way')
  await redis.stop()
  t.ok(swarm.finished() < CLIENTS, 'the fault hits while clients are still placing')
  t.ok(await waitFor(() => seenCount(swarm, 503, 'network') > 0, 10000), 'clients see the outage')
  const restarted = await startOwnRedis(t, redis.port)
  t.equal(restarted.port, redis.port, 'Redis is back on the same port, empty')

  await assertSettled(t, scenario, await swarm.done)
  // Redis down leaves every service up (docs/contracts.md: readiness per service); none needs the restart.
  t.same(serviceExits(scenario.launched), [], 'no service dies of the Redis outage')
})
