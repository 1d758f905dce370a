import { spawnSync } from 'node:child_process'
import t, { type Test } from 'tap'
import { pipelined } from '../../../shared/db/pipelined.js'
import { createSql, type Sql } from '../../../shared/db/sql.js'
import { holdLock, lockWaiters, TEST_DATABASE_URL, useTestDb } from '../../helpers/db.js'
import { waitFor } from '../../helpers/processes.js'

/** A pool of one connection: every transaction below runs on the connection the one before handed back. */
async function onePool(t: Test): Promise<{ sql: Sql; other: Sql }> {
  const { config, sql: other } = await useTestDb(t)
  await other`create table notes (id int primary key, note text not null)`
  const sql = createSql(config, { max: 1 })
  t.teardown(() => sql.end())
  return { sql, other }
}

const notes = async (sql: Sql) => (await sql<{ id: number; note: string }[]>`select id, note from notes order by id`).map((row) => `${row.id}:${row.note}`)

t.test('the writes handed to commit, and what came before, commit together, and answer in order', async (t) => {
  const { sql, other } = await onePool(t)
  const answered = await pipelined(sql, async (tx, commit) => {
    await tx`insert into notes values (1, 'before')`
    return commit([tx<{ id: number }[]>`insert into notes values (2, 'a') returning id`, tx<{ note: string }[]>`update notes set note = 'b' where id = 1 returning note`], ([inserted, updated]) => [inserted[0]!.id, updated[0]!.note])
  })
  t.same(answered, [2, 'b'])
  t.same(await notes(other), ['1:b', '2:a'], 'seen by another session')

  t.equal(await pipelined(sql, async (tx) => (await tx<{ id: number }[]>`insert into notes values (3, 'c') returning id`)[0]!.id), 3, 'work that never calls commit')
  t.same(await notes(other), ['1:b', '2:a', '3:c'], 'commits what it did')
})

t.test('a write that fails rolls back the whole transaction, and the connection serves the next one', async (t) => {
  const { sql, other } = await onePool(t)
  await other`insert into notes values (1, 'kept')`
  let settled = false
  const failed = pipelined(sql, async (tx, commit) => {
    await tx`insert into notes values (2, 'before')`
    return commit([tx`insert into notes values (3, 'first write')`, tx`insert into notes values (1, 'taken')`, tx`insert into notes values (4, 'after')`], () => (settled = true))
  })
  await t.rejects(failed, { code: '23505' }, 'rejects with the failing write\'s error')
  t.equal(settled, false, 'and never reads the results')
  t.same(await notes(other), ['1:kept'], 'nothing of it committed')

  await t.rejects(pipelined(sql, async (tx) => {
    await tx`insert into notes values (5, 'written, then thrown')`
    throw new Error('decided against it')
  }), /decided against it/)
  t.same(await notes(other), ['1:kept'], 'a throw before commit rolls back')

  const inTransaction = await pipelined(sql, async (tx, commit) => commit([tx<{ inTransaction: boolean }[]>`select now() = statement_timestamp() as in_transaction`], ([rows]) => rows[0]!.inTransaction))
  t.equal(inTransaction, false, 'the next transaction on the same connection begins afresh')
})

/** Asks Postgres from another process, blocking this one: nothing of this process runs meanwhile. */
function stateOf(pid: number): string {
  const run = spawnSync('psql', [TEST_DATABASE_URL, '-Atc', `select state from pg_stat_activity where pid = ${pid}`], { encoding: 'utf8' })
  return run.stdout.trim()
}

t.test('the COMMIT goes with the last writes: the transaction ends while this process is busy elsewhere', { skip: spawnSync('psql', ['--version']).status === 0 ? false : 'psql not installed' }, async (t) => {
  const { sql, other } = await onePool(t)
  await other`insert into notes values (1, 'held')`
  // Another session holds the row, so the write below waits in Postgres for it.
  const holder = await holdLock(other, (tx) => tx`update notes set note = 'holder' where id = 1`)
  let pid = 0
  const done = pipelined(sql, async (tx, commit) => {
    pid = (await tx<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid
    return commit([tx`update notes set note = 'pipelined' where id = 1`], () => 'committed')
  })
  t.ok(await waitFor(async () => (await lockWaiters(other, holder.pid)).includes(pid), 10_000, 10), 'the write waits for the row')
  await holder.release()

  // From here this process does not read its socket until Postgres says the transaction is over:
  // with a COMMIT of its own after the write's answer, it would stay `idle in transaction`.
  let state = stateOf(pid)
  for (const deadline = Date.now() + 10_000; state !== 'idle' && Date.now() < deadline;) state = stateOf(pid)
  t.equal(state, 'idle', 'committed in Postgres without this process taking a turn')
  t.equal(await done, 'committed')
  t.same(await notes(other), ['1:pipelined'])
})
