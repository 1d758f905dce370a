import t from 'tap'
import { TEST_DATABASE_URL } from '../helpers/db.js'
import { ANSWERS_BEFORE_FAULT, assertSettled, CLIENTS, inFlight, startScenario } from '../helpers/fault-scenario.js'
import { startOwnRedis, waitFor } from '../helpers/processes.js'

// A worker killed outright mid-job: its jobs stall and run again on the worker the launcher
// restarts (docs/contracts.md: `npm start` supervises), and each placement is charged once.
t.test('worker SIGKILL under 110 retrying clients, restarted by the launcher', async (t) => {
  const redis = await startOwnRedis(t)
  const scenario = await startScenario(t, { databaseUrl: TEST_DATABASE_URL, redisUrl: redis.url })
  const { swarm, launched } = scenario
  const before = launched.pids('worker')
  t.equal(before.length, 1, 'one worker under the launcher')

  // Killed while placements are pending, so the kill leaves jobs for the restarted worker to run.
  const underWay = await waitFor(async () => swarm.finished() >= ANSWERS_BEFORE_FAULT && (await inFlight(scenario)) > 0, 30000, 20)
  t.ok(underWay, 'placements are under way, some in flight')
  process.kill(before[0]!, 'SIGKILL')
  t.comment(`${await inFlight(scenario)} placements were pending when the worker died`)
  t.ok(swarm.finished() < CLIENTS, 'the fault hits while clients are still placing')
  const restarted = await waitFor(() => launched.pids('worker').some((pid) => !before.includes(pid)), 15000)
  t.ok(restarted, `the launcher restarted the worker:\n${restarted ? '' : launched.output()}`)

  await assertSettled(t, scenario, await swarm.done)
})
