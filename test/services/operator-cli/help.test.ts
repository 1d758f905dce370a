import t from 'tap'
import { commands } from '../../../services/operator-cli/commands/index.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { startSilentServer } from '../../helpers/processes.js'

// `--help` alone and after a command: usage on stdout, exit 0, built from the flags each command
// declares to its parser, and read without configuration or any connection: DATABASE_URL and
// REDIS_URL point at a listener that counts who comes.

const listener = await startSilentServer(t)
const { port } = new URL(listener.url)
const nowhere = { env: { DATABASE_URL: `postgres://root@127.0.0.1:${port}/courier`, REDIS_URL: `redis://127.0.0.1:${port}`, DATABASE_POOL_MAX: 'many' } }

t.test('--help alone lists every command, one a line', async (t) => {
  for (const help of ['--help', '-h']) {
    const run = await runOperatorCli(nowhere, [help])
    t.equal(run.code, 0, `${help} exits 0: ${run.stderr}`)
    t.equal(run.stderr, '')
    t.same(run.stdout.split('\n'), ['usage: npm run admin -- <command> [--flags]', 'commands:', ...Object.keys(commands).map((name) => `  ${name}`), 'npm run admin -- <command> --help lists its flags', ''])
  }
})

t.test('<command> --help lists the flags the command accepts, one a line, whatever else is typed', async (t) => {
  for (const [name, load] of Object.entries(commands)) {
    const flags = Object.keys((await load()).options)
    const run = await runOperatorCli(nowhere, [name, '--amount', '-5', '--help'])
    t.equal(run.code, 0, `${name} --help exits 0: ${run.stderr}`)
    t.equal(run.stderr, '')
    const lines = flags.length > 0 ? flags.map((flag) => `  --${flag} <value>`) : ['  (no flags)']
    t.same(run.stdout.split('\n'), [`usage: npm run admin -- ${name}${flags.length > 0 ? ' [--flags]' : ''}`, ...lines, ''], name)
  }
  const order = await runOperatorCli(nowhere, ['order:advance', '-h'])
  t.match(order.stdout, /^ {2}--courier-phone <value>$/m, 'order:advance names --courier-phone')
  const unknown = await runOperatorCli(nowhere, ['wallet:drain', '--help'])
  t.equal(unknown.code, 1, 'an unknown command is still refused')
  t.match(unknown.stderr, /^unknown command 'wallet:drain'; one of: business:create/)
})

t.test('no connection was opened for any of it', async (t) => {
  t.equal(listener.connections(), 0, 'neither Postgres nor Redis was dialled')
})
