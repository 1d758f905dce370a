import type { Sql, Tx } from './sql.js'

/** A transaction's last writes, sent with its COMMIT, and what to make of their results once it is over. */
export class Committing<T> {
  constructor(readonly settle: () => Promise<T>) {}
}

/** Hands the transaction's last writes to go out with its COMMIT; `then` gets their results after it. */
export type Commit = <W extends readonly unknown[], T>(writes: [...W], then: (results: { [K in keyof W]: Awaited<W[K]> }) => T) => Committing<T>

const commit: Commit = (writes, then) => {
  // postgres.js sends a tagged query once something awaits it: taken up here, before the
  // COMMIT that sql.begin sends when the work returns.
  const written = Promise.all(writes)
  // Read after the commit; until then a failure is only held.
  written.catch(() => {})
  return new Committing(async () => then(await written))
}

/**
 * A transaction whose last writes go out with its COMMIT, in one round trip: the COMMIT is sent
 * behind them in the same event-loop turn (postgres.js sends a message of 1 KB or more at once and
 * a smaller one at that turn's end), so the row locks they take (a business's event counter, its
 * wallet) are not held for the round trip it would take this process to read their answers and
 * then send the COMMIT. `work` returns `commit(writes, then)`, or a value (then what it did
 * commits, as with sql.begin).
 *
 * A write that fails aborts the transaction, so Postgres answers the COMMIT with a rollback; the
 * write's error is then thrown here, and `then` never runs. Each write must have sent its
 * statement, or be a tagged query not yet awaited, when handed over (every repository function
 * sends its one statement when called).
 */
export async function pipelined<T>(sql: Sql, work: (tx: Tx, commit: Commit) => Promise<T | Committing<T>>): Promise<T> {
  // The writes are not awaited in the callback: it returns, and sql.begin sends the COMMIT behind them.
  const { ended } = await sql.begin(async (tx) => ({ ended: await work(tx, commit) }))
  return ended instanceof Committing ? ended.settle() : ended
}
