import t from 'tap'
import { withDeadline } from '../../../shared/deadline.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { startSilentServer } from '../../helpers/processes.js'

// A DATABASE_URL at a port that accepts the connection and never answers (a frozen server, a
// Redis or some other listener): the CLI gives up within its connect timeout and says where in
// one line, never who.

t.test('a database that accepts and never answers: exit 1, one line naming host:port/db, no credentials', async (t) => {
  const silent = await startSilentServer(t)
  const { port } = new URL(silent.url)
  const env = { DATABASE_URL: `postgres://operator:s3cret-pass@127.0.0.1:${port}/courier_silent`, REDIS_URL: 'redis://127.0.0.1:1' }
  const run = await withDeadline(runOperatorCli({ env }, ['wallet:show', '--business', '00000000-0000-4000-8000-000000000000']), 60_000)
  t.ok(silent.connections() > 0, 'the CLI did reach the listener')
  t.equal(run.code, 1)
  t.equal(run.stdout, '')
  t.match(run.stderr, new RegExp(`^database unreachable at 127\\.0\\.0\\.1:${port}/courier_silent: .*CONNECT_TIMEOUT.*\\n$`))
  t.notMatch(run.stderr, /s3cret|operator/, 'no credentials')
})
