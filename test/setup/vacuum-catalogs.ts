import postgres from 'postgres'
import { TEST_DATABASE_URL } from '../helpers/db.js'

/**
 * Run by tap once before the test files (package.json, `tap.before`). Every test file migrates a
 * schema of its own and drops it, so a run leaves about 180 000 dead rows in the test database's
 * catalogs. A server without autovacuum (this machine's has it off) keeps them: three runs
 * later a schema's migration takes 60 % longer and a new connection's first query half as long
 * again, and a whole suite on a machine used all day runs slower than on a fresh one. Vacuuming
 * the catalogs first takes about a second and starts every run from the same place. A role not
 * allowed to vacuum them gets a warning from the server and the run goes on.
 */
const sql = postgres(TEST_DATABASE_URL, { max: 1, onnotice: () => {}, connect_timeout: 10 })
try {
  const bloated = await sql<{ name: string }[]>`
    select relname as name from pg_stat_sys_tables where schemaname = 'pg_catalog' and n_dead_tup > 1000`
  for (const { name } of bloated) await sql`vacuum ${sql('pg_catalog.' + name)}`
  if (bloated.length > 0) console.error(`# vacuumed ${bloated.length} catalogs of the test database`)
} catch (err) {
  // A test database not created yet has nothing to vacuum; the tests create it.
  console.error(`# catalogs not vacuumed: ${err instanceof Error ? err.message : String(err)}`)
} finally {
  await sql.end()
}
