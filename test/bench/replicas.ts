import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Redis } from 'ioredis'
import { commonEnv, loadConfig } from '../../shared/config.js'
import { ensureDatabase } from '../../shared/db/migrate.js'
import { createSql, type Sql } from '../../shared/db/sql.js'
import { seedAccount, type SeededAccount } from '../helpers/accounts.js'
import { childEnv, projectRoot, waitFor } from '../helpers/processes.js'
import { quoteRequest, shipment } from '../helpers/shipments.js'
import { drive, type Target } from './load.js'

/*
 * The capacity table of docs/scaling.md "Many replicas": `npm start` as it is, then with
 * `--replicas …`, each measured for quotes, placements of one business and placements of ten
 * businesses at once, with autocannon spread evenly over the gateways. Beside each figure:
 * what the machine's cores, Postgres (commits/s) and Redis (commands/s) did meanwhile.
 *
 *   node dist/test/bench/replicas.js   (BENCH_SECONDS 8, BENCH_REPLICAS the --replicas value)
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const REPLICAS = process.env.BENCH_REPLICAS ?? 'gateway=2,worker=3,dispatcher=2,webhook-sender=2'
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_bench'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const BUSINESSES = 10
const PORT_BASE = 27000

interface Row { setup: string; workload: string; perSecond: number; p99Ms: number; non2xx: number; cpuCores: number; commitsPerSecond: number; redisOpsPerSecond: number }

async function startLauncher(args: string[], id: string): Promise<{ child: ChildProcess; env: Record<string, string>; gateways: string[] }> {
  const ports = Object.fromEntries(['GATEWAY', 'PRICING', 'WORKER', 'WEBHOOK_SENDER', 'CONSOLE', 'DISPATCHER'].flatMap((service, i) => [[`${service}_PORT`, String(PORT_BASE + i)], [`${service}_OPS_PORT`, String(PORT_BASE + 100 + i)]]))
  const env = {
    ...ports, DATABASE_URL, REDIS_URL, DATABASE_SCHEMA: `bench_replicas_${id}`, QUEUE_PREFIX: `{bench-replicas-${id}}`, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0',
    PRICING_URL: `http://127.0.0.1:${ports.PRICING_PORT}`, CONSOLE_PUBLIC_URL: `http://localhost:${ports.CONSOLE_PORT}`,
  }
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist/services/launcher/main.js'), ...args], { cwd: projectRoot, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  if (!(await waitFor(() => lines.some((line) => line.startsWith('Demo API key: ')), 150_000))) throw new Error(`the launcher did not come up:\n${lines.join('\n')}`)
  const listed = lines.find((line) => line.startsWith('Gateways, one per replica'))?.split(': ')[1]?.split(' ')
  return { child, env, gateways: listed ?? [`http://127.0.0.1:${ports.GATEWAY_PORT}/v2`] }
}

async function stopLauncher(child: ChildProcess, sql: Sql, schema: string): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  await sql`drop schema if exists ${sql(schema)} cascade`
}

async function commits(sql: Sql): Promise<number> {
  const [row] = await sql<{ commits: number }[]>`select xact_commit::bigint as commits from pg_stat_database where datname = current_database()`
  return Number(row!.commits)
}

async function redisCommands(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1] ?? 0)
}

/** One workload against every gateway at once, `connections` spread evenly; the summed figures. */
async function measure(setup: string, workload: string, gateways: string[], target: (gateway: string) => Target, connections: number, sql: Sql, redis: Redis): Promise<Row> {
  const [commitsBefore, redisBefore, started] = [await commits(sql), await redisCommands(redis), performance.now()]
  const runs = await Promise.all(gateways.map((gateway) => drive(target(gateway), { connections: Math.ceil(connections / gateways.length), seconds: SECONDS, unitsPerRequest: 1 })))
  const elapsed = (performance.now() - started) / 1000
  const [commitsAfter, redisAfter] = [await commits(sql), await redisCommands(redis)]
  return {
    setup, workload,
    perSecond: Math.round(runs.reduce((sum, run) => sum + run.requestsPerSecond, 0)),
    p99Ms: Math.max(...runs.map((run) => run.p99Ms)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    cpuCores: runs[0]!.cpu.machine ?? 0,
    commitsPerSecond: Math.round((commitsAfter - commitsBefore) / elapsed),
    redisOpsPerSecond: Math.round((redisAfter - redisBefore) / elapsed),
  }
}

async function main(): Promise<void> {
  await ensureDatabase(DATABASE_URL)
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  const rows: Row[] = []
  for (const [setup, args] of [['npm start', []], [`--replicas ${REPLICAS}`, ['--replicas', REPLICAS]]] as const) {
    const id = randomBytes(4).toString('hex')
    const launched = await startLauncher([...args], id)
    const sql = createSql(loadConfig(commonEnv, launched.env), { max: 4 })
    try {
      const accounts: SeededAccount[] = []
      for (let i = 0; i < BUSINESSES; i++) accounts.push(await seedAccount(sql, { balance: 10_000_000_000, name: `Bench ${i}` }))
      const auth = (i: number) => ({ authorization: `Bearer ${accounts[i]!.apiKey}` })
      const quote = JSON.stringify(quoteRequest())
      const place = JSON.stringify([shipment()])
      rows.push(await measure(setup, 'quotes', launched.gateways, (gateway) => ({ url: `${gateway}/business/order/cost`, headers: auth(0), body: quote }), 50, sql, redis))
      rows.push(await measure(setup, 'placements, one business', launched.gateways, (gateway) => ({ url: `${gateway}/business/order`, headers: auth(0), body: place }), 32, sql, redis))
      rows.push(await measure(setup, 'placements, ten businesses', launched.gateways, (gateway) => ({ url: `${gateway}/business/order`, headers: auth(0), body: place, spread: accounts.map((_, i) => auth(i)) }), 32, sql, redis))
    } finally {
      await stopLauncher(launched.child, sql, launched.env.DATABASE_SCHEMA!)
      await sql.end()
    }
  }
  redis.disconnect()
  console.log('| setup | workload | per second | p99 ms | non-2xx | cores busy (of 2) | Postgres commits/s | Redis commands/s |')
  console.log('|---|---|---|---|---|---|---|---|')
  for (const row of rows) console.log(`| ${row.setup} | ${row.workload} | ${row.perSecond} | ${row.p99Ms} | ${row.non2xx} | ${row.cpuCores} | ${row.commitsPerSecond} | ${row.redisOpsPerSecond} |`)
}

await main()
