import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import { commonEnv, loadConfig, type CommonConfig } from '../../shared/config.js'
import { createSql, type Sql } from '../../shared/db/sql.js'
import { assertWalletsMatchLedger } from './db.js'
import { childEnv, freePort, projectRoot, waitFor } from './processes.js'

export const SERVICE_ENTRIES = {
  gateway: 'dist/services/gateway/main.js',
  pricing: 'dist/services/pricing/main.js',
  worker: 'dist/services/placement-worker/main.js',
  'webhook-sender': 'dist/services/webhook-sender/main.js',
  console: 'dist/services/console/main.js',
  dispatcher: 'dist/services/dispatcher/main.js',
} as const
export type ServiceName = keyof typeof SERVICE_ENTRIES

/** A launcher process as spawned: what it printed, when it exits, its children. */
export interface LauncherProcess {
  env: Record<string, string>
  launcherPid: number
  /** Resolves with the launcher's exit code. */
  exit: Promise<number | null>
  /** The pids of the launcher's children running that service right now. */
  pids: (service: ServiceName) => number[]
  /** Everything the launcher printed so far, a line each. */
  lines: string[]
}

export interface Launched {
  /** http://127.0.0.1:PORT/v2, as the launcher printed it. */
  baseUrl: string
  apiKey: string
  /** The demo courier's token, as the launcher printed it. */
  courierToken: string
  /** The demo business the launcher seeded. */
  businessId: string
  /** A call to its business API with the demo key: `business('GET', 'orders/ORD-…')`. */
  business: (method: string, route: string, body?: unknown, headers?: Record<string, string>) => Promise<Response>
  config: CommonConfig
  /** The launcher's environment: its schema, queue prefix and ports, for a process run beside it. */
  env: Record<string, string>
  /** A small pool on the launcher's schema, for the test's own reads and setup. */
  sql: Sql
  launcherPid: number
  /** The pids of the launcher's children running that service right now. */
  pids: (service: ServiceName) => number[]
  /** Everything the launcher printed so far. */
  output: () => string
}

interface LauncherOptions {
  databaseUrl: string
  redisUrl: string
  env?: Record<string, string>
  /** The launcher's command line, e.g. `['--replicas', 'gateway=2']`. */
  args?: string[]
  /** How long to wait for its banner: many replicas on a busy machine take longer than the default 60 s. */
  readyTimeoutMs?: number
}

/**
 * Runs the built `npm start` launcher (no rebuild: `npm test` builds first) on free ports, its
 * own schema and queue prefix, and stops it with its children when the test ends.
 */
export async function spawnLauncher(t: Test, options: LauncherOptions): Promise<LauncherProcess> {
  const suffix = randomBytes(5).toString('hex')
  const ports = {
    GATEWAY_PORT: await freePort(),
    GATEWAY_OPS_PORT: await freePort(),
    PRICING_PORT: await freePort(),
    PRICING_OPS_PORT: await freePort(),
    WORKER_PORT: await freePort(),
    WORKER_OPS_PORT: await freePort(),
    WEBHOOK_SENDER_PORT: await freePort(),
    WEBHOOK_SENDER_OPS_PORT: await freePort(),
    CONSOLE_PORT: await freePort(),
    CONSOLE_OPS_PORT: await freePort(),
    DISPATCHER_PORT: await freePort(),
    DISPATCHER_OPS_PORT: await freePort(),
  }
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl,
    DATABASE_SCHEMA: `t_${suffix}`,
    QUEUE_PREFIX: `{courier-test-${suffix}}`,
    REDIS_URL: options.redisUrl,
    NODE_ENV: 'test',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '0',
    AUTH_FAILURE_LIMIT: '0',
    // No PRICING_URL or CONSOLE_PUBLIC_URL: the launcher derives them from the ports, as `npm start` on a busy machine needs.
    // Postgres allows 100 sessions and two test files run at once: a launched stack keeps its
    // pools small (34 sessions at most, where the defaults allow 82), as a test's load needs.
    DATABASE_POOL_MAX: '4',
    WORKER_CONCURRENCY: '6',
    WEBHOOK_CONCURRENCY: '6',
    DISPATCHER_CONCURRENCY: '4',
    ...Object.fromEntries(Object.entries(ports).map(([name, value]) => [name, String(value)])),
    ...options.env,
  }
  const launcher = spawn(process.execPath, [path.join(projectRoot, 'dist/services/launcher/main.js'), ...(options.args ?? [])], {
    cwd: projectRoot,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  for (const stream of [launcher.stdout, launcher.stderr]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  const exited = () => launcher.exitCode !== null || launcher.signalCode !== null
  // 'close', not 'exit': by then its stdout and stderr have ended, so `lines` holds its last words too.
  const exit = new Promise<number | null>((resolve) => launcher.once('close', (code) => resolve(code)))

  const pids = (service: ServiceName) => childPids(launcher.pid!, service, env.QUEUE_PREFIX!)
  t.teardown(async () => {
    // The children too: a launcher killed outright would leave them behind.
    const children = (Object.keys(SERVICE_ENTRIES) as ServiceName[]).flatMap(pids)
    if (!exited()) {
      launcher.kill('SIGTERM')
      const stopped = await waitFor(exited, 10000)
      if (!stopped) launcher.kill('SIGKILL')
    }
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    // With its services stopped, the schema ends on useTestDb's invariant (every wallet equals its
    // ledger) before it is dropped; a launcher that stopped before migrating left no wallets to check.
    // Only a broken invariant fails here: a Postgres the test itself stopped (a fault scenario,
    // whose body checked the ledger) must not end the teardowns that stop its own servers.
    const sql = createSql(loadConfig(commonEnv, env), { max: 1 })
    try {
      const migrated = await sql<{ migrated: boolean }[]>`select to_regclass(${`${env.DATABASE_SCHEMA!}.wallets`}) is not null as migrated`
        .then(([row]) => row.migrated, () => false)
      if (migrated) await assertWalletsMatchLedger(sql)
    } finally {
      await sql`drop schema if exists ${sql(env.DATABASE_SCHEMA!)} cascade`.catch(() => {})
      await sql.end({ timeout: 5 })
    }
  })

  return { env, launcherPid: launcher.pid!, exit, pids, lines }
}

/**
 * Whether the launcher's banner has been read to its end: the blank line after `Courier API ready
 * at`. Its lines are separate writes, so a reader may hold the first of them before the rest.
 */
function bannerShown(lines: string[]): boolean {
  const start = lines.findIndex((line) => line.startsWith('Courier API ready at '))
  return start >= 0 && lines.indexOf('', start + 1) > start
}

/** The launcher up and serving: its demo key, base URL and demo business, and a pool on its schema. */
export async function startLauncher(t: Test, options: LauncherOptions): Promise<Launched> {
  const { env, launcherPid, pids, lines, exit } = await spawnLauncher(t, options)
  let exited = false
  void exit.then(() => (exited = true))
  const ready = await waitFor(() => exited || bannerShown(lines), options.readyTimeoutMs ?? 60000)
  const apiKey = lines.map((line) => /^Demo API key: (ck_live_[0-9A-Za-z]{32})$/.exec(line)?.[1]).find(Boolean)
  const baseUrl = lines.map((line) => /^Courier API ready at (http:\/\/\S+\/v2)$/.exec(line)?.[1]).find(Boolean)
  const businessId = lines.map((line) => /^Demo business ([0-9a-f-]{36}),/.exec(line)?.[1]).find(Boolean)
  const courierToken = lines.map((line) => /^Demo courier token: (cc_live_[0-9A-Za-z]{32}) /.exec(line)?.[1]).find(Boolean)
  if (!ready || !apiKey || !baseUrl || !businessId || !courierToken) throw new Error(`the launcher did not come up:\n${lines.join('\n')}`)

  const config = loadConfig(commonEnv, env)
  const sql = createSql(config, { max: 4 })
  t.teardown(() => sql.end({ timeout: 5 }))
  const business = (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}/business/${route}`, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { baseUrl, apiKey, courierToken, businessId, business, config, env, sql, launcherPid, pids, output: () => lines.join('\n') }
}

/**
 * Children of the launcher running that service, found in /proc (no pgrep needed). The parent pid
 * says whose they are; the queue prefix in their environment guards against a pid reused by
 * another process.
 */
function childPids(parent: number, service: ServiceName, queuePrefix: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        // The parent pid follows the state, after the parenthesised command name (which may hold spaces).
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        const parentPid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
        return (
          parentPid === parent &&
          readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(SERVICE_ENTRIES[service]) &&
          readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`QUEUE_PREFIX=${queuePrefix}`)
        )
      } catch {
        return false
      }
    })
}

/**
 * Small locks and sweeps (DESIGN 17.5) for the fault tests of a launched stack, so work a killed
 * process or a failed-over Redis held is taken back within seconds.
 */
export const FAST_RECOVERY_ENV = {
  PLACEMENT_ORPHAN_AFTER_S: '3',
  PLACEMENT_TIMEOUT_MS: '5000',
  REQUEST_TIMEOUT_MS: '10000',
  WORKER_LOCK_MS: '1500',
  WORKER_STALLED_INTERVAL_MS: '500',
  WEBHOOK_LOCK_MS: '1500',
  WEBHOOK_STALLED_INTERVAL_MS: '500',
  WEBHOOK_REQUEUE_AFTER_S: '2',
  WEBHOOK_RETRY_SCALE: '0.001',
  DISPATCH_OFFER_S: '10',
  DISPATCH_RETRY_S: '1',
  DISPATCHER_LOCK_MS: '1500',
  DISPATCHER_STALLED_INTERVAL_MS: '500',
}
