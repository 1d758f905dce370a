import t, { type Test } from 'tap'
import { createSql, isConnectionError, type Sql } from '../../../shared/db/sql.js'
import { useTestDb } from '../../helpers/db.js'

// A session that Postgres ends under us (a failover, `pg_terminate_backend`, an immediate
// shutdown) costs the queries it held and nothing else: no exception escapes a timer and kills
// the process, no later query takes its error for its own answer, and no query waits forever.
// postgres 3.4.9 failed all three (deploy/patches/postgres+3.4.9.patch, porsager/postgres#1154,
// #1208): tap fails a file on an uncaught exception, and a query left waiting fails its deadline.

type Settled = { status: 'answered'; value: unknown } | { status: 'failed'; code: string; transient: boolean } | { status: 'waiting' }

/** How the query settled within `deadlineMs`: answered, failed (with its code), or still waiting. */
function settledWithin(query: Promise<unknown>, deadlineMs = 5000): Promise<Settled> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<Settled>((resolve) => (timer = setTimeout(() => resolve({ status: 'waiting' }), deadlineMs)))
  const outcome = query.then(
    (value): Settled => ({ status: 'answered', value }),
    (err: { code?: string }): Settled => ({ status: 'failed', code: String(err.code), transient: isConnectionError(err) }),
  )
  return Promise.race([outcome, deadline]).finally(() => clearTimeout(timer))
}

const valueOf = async (sql: Sql, n: number) => (await sql<{ n: number }[]>`select ${n}::int as n`)[0]!.n

async function pools(t: Test) {
  const { config, sql: killer } = await useTestDb(t)
  // One connection: the queries that wait for it are served by the session that replaces the dead one.
  const sql = createSql(config, { max: 1 })
  t.teardown(() => sql.end({ timeout: 5 }))
  const terminate = async (pid: number) => void (await killer`select pg_terminate_backend(${pid})`)
  return { sql, terminate }
}

t.test('a transaction whose session is ended: it fails as a connection error, and the queries waiting for its connection are answered', async (t) => {
  const { sql, terminate } = await pools(t)
  // The order of the socket's error, its close and the ROLLBACK the transaction sends varies from
  // round to round; each order once crashed the process or stalled the pool.
  for (let round = 1; round <= 12; round++) {
    const transaction = settledWithin(sql.begin(async (tx) => {
      const [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`
      await terminate(pid!)
      await tx`select pg_sleep(0.05)`
    }))
    const waiting = [settledWithin(valueOf(sql, round * 10 + 1)), settledWithin(valueOf(sql, round * 10 + 2))]
    const ended = await transaction
    t.match(ended, { status: 'failed', transient: true }, `round ${round}: the transaction fails as a connection error (503 to a client)`)
    t.same(await Promise.all(waiting), [{ status: 'answered', value: round * 10 + 1 }, { status: 'answered', value: round * 10 + 2 }], `round ${round}: the queries waiting for the connection get their own answers, not its error`)
  }
  t.same(await settledWithin(valueOf(sql, 7)), { status: 'answered', value: 7 }, 'the pool serves on')
})

t.test('a reserved connection whose session is ended: its queries fail, and releasing it hands nothing dead back to the pool', async (t) => {
  const { sql, terminate } = await pools(t)
  for (let round = 1; round <= 5; round++) {
    const reserved = await sql.reserve()
    const [{ pid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`
    await terminate(pid!)
    // Each query until the close is seen may still reach the dying session; after it, each fails at once.
    let outcome = await settledWithin(reserved`select 1`)
    for (let tries = 1; outcome.status === 'answered' && tries < 100; tries++) outcome = await settledWithin(reserved`select 1`)
    t.match(outcome, { status: 'failed', transient: true }, `round ${round}: a query on the dead session fails as a connection error`)
    t.match(await settledWithin(reserved`select 1`), { status: 'failed', code: 'CONNECTION_CLOSED' }, `round ${round}: and so does the next, instead of throwing from a timer`)
    reserved.release()
    t.same(await settledWithin(valueOf(sql, round)), { status: 'answered', value: round }, `round ${round}: the pool answers from a new session`)
  }
})
