import t from 'tap'
import { ANSWERS_BEFORE_FAULT, assertSettled, CLIENTS, seenCount, serviceExits, startScenario } from '../helpers/fault-scenario.js'
import { startOwnPostgres } from '../helpers/postgres.js'
import { startOwnRedis, waitFor } from '../helpers/processes.js'

// Postgres crashes (immediate shutdown) and comes back: the services reconnect, transactions cut
// off roll back, and the clients' retries reach a final answer, each placement charged once.
t.test('Postgres restart under 110 retrying clients', async (t) => {
  const redis = await startOwnRedis(t)
  const pg = await startOwnPostgres(t)
  const scenario = await startScenario(t, { databaseUrl: pg.url('courier_test'), redisUrl: redis.url })
  const { swarm } = scenario

  t.ok(await waitFor(() => swarm.finished() >= ANSWERS_BEFORE_FAULT, 30000), 'placements are under way')
  await pg.stop()
  t.ok(swarm.finished() < CLIENTS, 'the fault hits while clients are still placing')
  t.ok(await waitFor(() => seenCount(swarm, 503, 'network') > 0, 10000), 'clients see the outage')
  await pg.start()

  await assertSettled(t, scenario, await swarm.done)
  // The driver once wrote to the socket the crash had closed and threw from a timer, killing the
  // worker (supervision restarted it); deploy/patches/postgres+3.4.9.patch settles those writes.
  t.same(serviceExits(scenario.launched), [], 'no service dies of the Postgres outage')
})
