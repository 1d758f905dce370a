import { userInfo } from 'node:os'
import { parseArgs } from 'node:util'
import type { RedisClient } from '../../shared/redis.js'
import { commonEnv, ConfigError, loadConfig, type CommonConfig } from '../../shared/config.js'
import { migrate } from '../../shared/db/migrate.js'
import { createSql, databasePort, databaseWhere, isConnectionError, type Sql } from '../../shared/db/sql.js'
import type { Command, Flags, OperatorContext } from './command.js'
import { commands } from './commands/index.js'
import { DatabaseUnreachableError } from './database-unreachable-error.js'
import { OperatorInputError } from './operator-input-error.js'
import { errorCode, errorMessage } from '../../shared/errors/error-message.js'

const known = () => Object.keys(commands).join(', ')

async function chooseCommand(name: string): Promise<Command> {
  if (!Object.hasOwn(commands, name)) throw new OperatorInputError(`unknown command '${name}'; one of: ${known()}`)
  return commands[name]()
}

// parseArgs takes `-5` after `--amount` for an option and refuses it as ambiguous; an operator
// who types a negative number means it as the value, and the command's own check should answer.
const NEGATIVE_NUMBER = /^-\.?\d/

/** `--name -5` as `--name=-5` when `--name` takes a value, so a negative number reaches the command's check. */
function joinNegativeValues(command: Command, args: string[]): string[] {
  const joined: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    const next = args[i + 1]
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : null
    if (name !== null && Object.hasOwn(command.options, name) && command.options[name].type === 'string' && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`${arg}=${next}`)
      i += 1
    } else {
      joined.push(arg)
    }
  }
  return joined
}

function readFlags(command: Command, args: string[]): Flags {
  try {
    const { values } = parseArgs({ args: joinNegativeValues(command, args), options: command.options, strict: true, allowPositionals: false })
    // Every option is declared `type: 'string'`, so a value here is a string.
    return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, string] => typeof entry[1] === 'string'))
  } catch (err) {
    // parseArgs explains itself over several lines; the contract is one line on stderr.
    throw new OperatorInputError(errorMessage(err).replace(/\s*\n\s*/g, ' '))
  }
}

const HELP = ['--help', '-h']

/** Every command, for `--help` alone. */
function overview(): string {
  return ['usage: npm run admin -- <command> [--flags]', 'commands:', ...Object.keys(commands).map((name) => `  ${name}`), 'npm run admin -- <command> --help lists its flags'].join('\n')
}

/** A command's flags, one a line, as it declares them to the parser: the help cannot drift from what is accepted. */
function usage(name: string, command: Command): string {
  const flags = Object.keys(command.options)
  return [`usage: npm run admin -- ${name}${flags.length > 0 ? ' [--flags]' : ''}`, ...(flags.length > 0 ? flags.map((flag) => `  --${flag} <value>`) : ['  (no flags)'])].join('\n')
}

/** What the CLI prints on stdout: usage for `--help` (read before any configuration or connection), else the command's JSON. */
async function main(argv: string[]): Promise<string> {
  const [name, ...args] = argv
  if (name === undefined) throw new OperatorInputError(`a command is required; one of: ${known()}`)
  if (HELP.includes(name)) return overview()
  const command = await chooseCommand(name)
  if (args.some((arg) => HELP.includes(arg))) return usage(name, command)
  return JSON.stringify(await runCommand(command, args))
}

async function runCommand(command: Command, args: string[]): Promise<Record<string, unknown>> {
  const flags = readFlags(command, args)
  const config = loadConfig(commonEnv)
  const run = command.prepare(flags, config)
  try {
    return await runConnected(config, run)
  } catch (err) {
    // createSql's connect_timeout bounds each connection, a silent listener included: it ends here.
    if (isDatabaseConnectionError(err, config)) throw new DatabaseUnreachableError(databaseWhere(config.DATABASE_URL), err)
    throw err
  }
}

/** Errors of a socket, which any client a command uses can meet; every other connection code is the driver's or the server's. */
const SOCKET_ERRORS = ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']

/**
 * A connection error of the database's, not of the photo store or Redis a command also reaches.
 * The driver's own codes (a connect timeout, a closed connection, even over TLS, whose socket
 * names no port) and the server's are the database's; a socket's error is when it names the port
 * the driver dials (DATABASE_URL's, else PGPORT, else 5432), or none.
 */
function isDatabaseConnectionError(err: unknown, config: CommonConfig): boolean {
  if (!isConnectionError(err)) return false
  if (!SOCKET_ERRORS.includes(String(errorCode(err)))) return true
  const port = typeof err === 'object' && err !== null && 'port' in err && typeof err.port === 'number' ? err.port : null
  return port === null || port === databasePort(new URL(config.DATABASE_URL))
}

async function runConnected(config: CommonConfig, run: (context: OperatorContext) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  // Works on a fresh machine: the database and its tables are created on first use.
  await migrate(config)
  const sql: Sql = createSql(config, { max: 2 })
  let redis: Promise<RedisClient | null> | undefined
  const context: OperatorContext = {
    sql,
    config,
    actor: `cli:${userInfo().username}`,
    // Loaded on first use: ioredis is most of a start's cost, and only some commands announce.
    redis: () => (redis ??= import('./announce.js').then(({ connectRedis }) => connectRedis(config))),
    announce: async (message) => (await import('./announce.js')).announce(await context.redis(), config.QUEUE_PREFIX, message),
  }
  try {
    return await run(context)
  } finally {
    await sql.end({ timeout: 5 })
    if (redis) (await redis)?.disconnect()
  }
}

try {
  process.stdout.write(`${await main(process.argv.slice(2))}\n`)
} catch (err) {
  const message = err instanceof OperatorInputError || err instanceof ConfigError || err instanceof DatabaseUnreachableError
    ? errorMessage(err)
    : `failed: ${errorMessage(err)}`
  process.stderr.write(`${message}\n`)
  process.exitCode = 1
}
