import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Redis } from 'ioredis'
import { loadConfig, webhookSenderEnv, workerEnv } from '../../shared/config.js'
import { ensureDatabase, migrate } from '../../shared/db/migrate.js'
import { createSql } from '../../shared/db/sql.js'
import { toMinor } from '../../shared/money.js'
import { createApiKey } from '../../shared/accounts/api-keys.js'
import { createBusiness, setBusinessRateCard } from '../../shared/db/businesses.js'
import { importRateCard } from '../../shared/pricing/rate-card-file.js'
import { createWallet, creditWallet } from '../../shared/db/wallets.js'
import { demoCardFile } from '../helpers/accounts.js'
import { ISLAND, quoteRequest, shipment } from '../helpers/shipments.js'
import { prepareBaselineSchema } from './baselines.js'
import { drive, type Run, type Target } from './load.js'
import { projectRoot } from '../helpers/processes.js'
import { freePort, peakRssMb, rssMb, startNode, stop, stopAll, waitReady, type Child } from './processes.js'
import { dispatchCase, drainDispatchQueue, locationCase } from './couriers.js'
import { formatTable, verdicts, type CaseResult, type Memory, type Resident } from './report.js'
import { startReceiver, webhookCase } from './webhooks.js'
import { formatHistory, historyCase } from './history.js'
import { newUuid, newWebhookSecret } from '../../shared/ids.js'
import { nodeArgsOf } from '../../services/launcher/scripts.js'
import { errorMessage } from '../../shared/errors/error-message.js'

/*
 * `npm run bench`: the project as `npm start` runs it (four processes), on a database and a
 * queue prefix of its own, against bare baselines of the same stack, alternating between them.
 *
 *   BENCH_SECONDS   length of one measured run (default 8)
 *   BENCH_ROUNDS    baseline/project pairs per case (default 3)
 *   BENCH_WARMUP    warm-up seconds per side per case (default 2); the webhooks case warms up
 *                   with one burst per side when it is above 0
 *   BENCH_CASES     comma list of quote, courier-location, dispatch, place-1, place-100, place-1-ten,
 *                   webhooks (default all); dispatch always runs before the placement cases
 *   BENCH_WEBHOOK_EVENTS      events per webhooks burst (default 3000)
 *   BENCH_WEBHOOK_DEADLINE_S  a webhooks burst not delivered by then fails the bench (default 60)
 *   BENCH_LOCATION_COURIERS   couriers the location case's requests take turns over (default 20000:
 *                   over twice the gateway's pings a second, so none pings twice a second; a 429
 *                   in that case's row says to raise it)
 *   BENCH_DISPATCH_COURIERS   couriers on shift near the pickups in the dispatch case (default 200)
 *   BENCH_DISPATCH_RATE       placements a second in the dispatch case (default 100)
 *   BENCH_DISPATCH_BUSINESSES businesses placing them in turn (default 10; 1 queues every order and
 *                   courier move on one business's event counter)
 *   BENCH_DISPATCH_DEADLINE_S an order with no offer on a stream by then, after the placing ends, is missed (default 10)
 *   BENCH_HISTORY_SMALL, BENCH_HISTORY_LARGE  events of one business the history case reads at (default
 *                   100000 and 10000000); BENCH_HISTORY_CALLS timed calls per query and size (default 1000).
 *                   That case is not in the default list (filling 10 million rows takes minutes and
 *                   a few GB): name it, and it runs first, on Postgres alone (history.ts)
 *   BENCH_ID        names the schemas and Redis prefixes (default `bench`)
 *   BENCH_RESULTS_DIR  where the JSON goes (default test/bench/results)
 *   BENCH_CPU_PROF  comma list of processes to run with --cpu-prof, into .bench-prof/: gateway, pricing,
 *                   worker, webhook-sender, baseline-quote-front, baseline-quote-back, baseline-place-front,
 *                   baseline-place-worker, baseline-webhook-worker,
 *                   dispatcher, baseline-location
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const WARMUP = Number(process.env.BENCH_WARMUP ?? Math.min(2, SECONDS))
const ID = process.env.BENCH_ID ?? 'bench'
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_bench'
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'
const RESULTS_DIR = process.env.BENCH_RESULTS_DIR ?? path.join(projectRoot, 'test', 'bench', 'results')
const PROFILED = new Set((process.env.BENCH_CPU_PROF ?? '').split(',').filter(Boolean))
const WEBHOOK_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 3000)
const WEBHOOK_DEADLINE_S = Number(process.env.BENCH_WEBHOOK_DEADLINE_S ?? 60)
const LOCATION_COURIERS = Number(process.env.BENCH_LOCATION_COURIERS ?? 20_000)
const DISPATCH_COURIERS = Number(process.env.BENCH_DISPATCH_COURIERS ?? 200)
const DISPATCH_RATE = Number(process.env.BENCH_DISPATCH_RATE ?? 100)
const DISPATCH_BUSINESSES = Number(process.env.BENCH_DISPATCH_BUSINESSES ?? 10)
const DISPATCH_DEADLINE_S = Number(process.env.BENCH_DISPATCH_DEADLINE_S ?? 10)
const HISTORY_SMALL = Number(process.env.BENCH_HISTORY_SMALL ?? 100_000)
const HISTORY_LARGE = Number(process.env.BENCH_HISTORY_LARGE ?? 10_000_000)
const HISTORY_CALLS = Number(process.env.BENCH_HISTORY_CALLS ?? 1000)
// The cases that leave live orders behind: the dispatch case runs before them (couriers.ts).
const PLACING = ['place-1', 'place-100', 'place-1-ten', 'webhooks']

const PROJECT_SCHEMA = `${ID.replace(/\W/g, '_')}_project`
const BASELINE_SCHEMA = `${ID.replace(/\W/g, '_')}_baseline`
const HISTORY_SCHEMA = `${ID.replace(/\W/g, '_')}_history`
const QUEUE_PREFIX = `{courier-${ID}}`
const BASELINE_PREFIX = `{baseline-${ID}}`
// Enough for every placement of the run many times over (major units).
const WALLET_MAJOR = 10_000_000_000
// The place-1-ten case: this many businesses, each with its own key and wallet, placing at once.
const SPREAD_BUSINESSES = 10

// Island to Ikeja, a bike band of up to 5 kg, coordinates given so nothing is geocoded.
const QUOTE_BODY = quoteRequest({ pickup_address: 'Broad Street, Lagos Island', pickup_latitude: ISLAND.lat, pickup_longitude: ISLAND.lng })
const SHIPMENT = shipment()

interface CaseDefinition {
  name: string
  connections: number
  unitsPerRequest: number
  unit: string
  project: Target
  baseline: Target
  bare: Target
}

/** A case as the rounds see it: two sides to alternate, whatever drives them. */
interface CaseSides {
  connections: number
  unit: string
  seconds: number
  /** The same-work baseline; none where the case has none. */
  baseline?: (seconds: number) => Promise<Run>
  /** The bare stack; none where the target is absolute (dispatch). */
  bare?: (seconds: number) => Promise<Run>
  project: (seconds: number) => Promise<Run>
  close?: () => Promise<void>
}

async function clearRedis(prefixes: string[]): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    for (const prefix of prefixes) {
      let cursor = '0'
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
        cursor = next
        if (keys.length > 0) await redis.del(...keys)
      } while (cursor !== '0')
    }
  } finally {
    redis.disconnect()
  }
}

async function dropSchemas(): Promise<void> {
  const sql = createSql({ DATABASE_URL, DATABASE_SCHEMA: 'public', DATABASE_POOL_MAX: 1 })
  try {
    for (const schema of [PROJECT_SCHEMA, BASELINE_SCHEMA, HISTORY_SCHEMA]) await sql`drop schema if exists ${sql(schema)} cascade`
  } finally {
    await sql.end()
  }
}

/** An account as the operator sets one up (the repositories test/helpers/accounts.ts uses): the demo card, a large wallet, a key. */
async function seedAccount(sql: ReturnType<typeof createSql>): Promise<{ businessId: string; apiKey: string }> {
  const card = demoCardFile()
  return sql.begin(async (tx) => {
    const business = await createBusiness(tx, newUuid(), {
      name: 'Bench Stores', phone: '+2348010000000', address: '12 Admiralty Way, Lekki', state: 'Lagos', latitude: 6.4433, longitude: 3.4723, currency: 'NGN',
    })
    await createWallet(tx, business.id, 'NGN')
    await creditWallet(tx, business.id, toMinor(WALLET_MAJOR), 'bench')
    const key = await createApiKey(tx, business.id, ['orders:write', 'webhooks:write'])
    const imported = await importRateCard(tx, { ...card, name: `Bench ${business.id}` }, 'NGN')
    await setBusinessRateCard(tx, business.id, imported.rate_card_id)
    return { businessId: business.id, apiKey: key.apiKey }
  }) as Promise<{ businessId: string; apiKey: string }>
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

function summarise(runs: Run[]) {
  if (runs.length === 0) return undefined
  const best = runs.reduce((a, b) => (b.unitsPerSecond > a.unitsPerSecond ? b : a))
  return {
    best,
    medianUnitsPerSecond: median(runs.map((run) => run.unitsPerSecond)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors + run.timeouts, 0),
    runs,
  }
}

async function main() {
  const started = new Date()
  const listed = (process.env.BENCH_CASES ?? 'quote,courier-location,dispatch,place-1,place-100,place-1-ten,webhooks').split(',').map((name) => name.trim()).filter(Boolean)
  const firstPlacing = listed.findIndex((name) => PLACING.includes(name))
  const caseNames = listed.includes('dispatch') && firstPlacing >= 0 && firstPlacing < listed.indexOf('dispatch')
    ? [...listed.slice(0, firstPlacing), 'dispatch', ...listed.slice(firstPlacing).filter((name) => name !== 'dispatch')]
    : listed
  if (caseNames !== listed) log('bench: dispatch moved before the placement cases, whose orders would wait for its dispatcher first')
  log(`bench: ${caseNames.join(', ')}; ${ROUNDS} rounds of ${SECONDS} s per side after ${WARMUP} s warm-up; ${os.cpus().length} CPUs, Node ${process.version}`)


  // A clean slate: the bench's own schemas and Redis keys, never the dev stack's.
  await clearRedis([QUEUE_PREFIX, BASELINE_PREFIX])
  await ensureDatabase(DATABASE_URL)
  await dropSchemas()

  // Postgres alone, before anything is started (history.ts); its figures go in the report's `history`.
  const history = caseNames.includes('history')
    ? await historyCase({ databaseUrl: DATABASE_URL, schema: HISTORY_SCHEMA, small: HISTORY_SMALL, large: HISTORY_LARGE, calls: HISTORY_CALLS, log })
    : undefined
  if (history) console.log(formatHistory(history))
  const stackCases = caseNames.filter((name) => name !== 'history')
  if (stackCases.length === 0) {
    writeReport(started, { settings: { cases: caseNames, historySmall: HISTORY_SMALL, historyLarge: HISTORY_LARGE, historyCalls: HISTORY_CALLS }, history })
    return
  }
  const projectEnv: Record<string, string> = {
    DATABASE_URL,
    DATABASE_SCHEMA: PROJECT_SCHEMA,
    REDIS_URL,
    QUEUE_PREFIX,
    RATE_LIMIT_MAX: '0',
    HOST: '127.0.0.1',
    // Not production: the receiver is plain http on 127.0.0.1, which production config refuses.
    // NODE_ENV changes nothing else in the services, so the numbers are production's.
    NODE_ENV: 'development',
    // As the launcher does: one token per run, shared by the gateway and pricing.
    INTERNAL_TOKEN: randomBytes(32).toString('base64url'),
    QUOTE_SIGNING_KEY: randomBytes(32).toString('base64url'),
    WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    // As the launcher does for the gateway and the sender: the receiver is http on 127.0.0.1.
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOW_PRIVATE: 'true',
  }
  const config = loadConfig(workerEnv, projectEnv)
  const webhookConcurrency = loadConfig(webhookSenderEnv, projectEnv).WEBHOOK_CONCURRENCY
  await migrate(config)
  const sql = createSql(config, { max: 2 })
  // One account for the single-business cases, ten more placing at once for place-1-ten.
  const [account, ...others] = await (async () => {
    const accounts = []
    // More for the dispatch case, whose orders are the only ones its couriers see.
    for (let i = 0; i < 1 + SPREAD_BUSINESSES + DISPATCH_BUSINESSES; i++) accounts.push(await seedAccount(sql))
    return accounts
  })().finally(() => sql.end())
  const spread = others.slice(0, SPREAD_BUSINESSES)
  const dispatchAccounts = others.slice(SPREAD_BUSINESSES)
  const [walletId, ...spreadWallets] = await prepareBaselineSchema(DATABASE_URL, BASELINE_SCHEMA, toMinor(WALLET_MAJOR), SPREAD_BUSINESSES + 1)

  const [gatewayPort, pricingPort, workerPort, senderPort, gatewayOps, pricingOps, workerOps, senderOps, quoteBack, quoteFront, placeFront, placeWorker, webhookWorker,
    dispatcherPort, dispatcherOps, locationBaseline] = await Promise.all(
    Array.from({ length: 16 }, () => freePort()),
  )
  Object.assign(projectEnv, {
    GATEWAY_PORT: String(gatewayPort),
    PRICING_PORT: String(pricingPort),
    WORKER_PORT: String(workerPort),
    WEBHOOK_SENDER_PORT: String(senderPort),
    GATEWAY_OPS_PORT: String(gatewayOps),
    PRICING_OPS_PORT: String(pricingOps),
    WORKER_OPS_PORT: String(workerOps),
    WEBHOOK_SENDER_OPS_PORT: String(senderOps),
    DISPATCHER_PORT: String(dispatcherPort),
    DISPATCHER_OPS_PORT: String(dispatcherOps),
    PRICING_URL: `http://127.0.0.1:${pricingPort}`,
  })
  // The one receiver both sides of the webhooks case deliver to; idle until that case.
  const receiver = await startReceiver()
  const baselineSecret = newWebhookSecret()

  // The project exactly as the launcher starts it (services/launcher/main.ts).
  const profileDir = path.join(projectRoot, '.bench-prof')
  const profile = (name: string) => (PROFILED.has(name) ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${name}-${Date.now()}.cpuprofile`] : [])
  const service = (name: string, script: string): Child => startNode(name, [...profile(name), ...nodeArgsOf(script)], projectEnv)
  const baseline = (role: string, env: Record<string, string>): Child => startNode(`baseline-${role}`, [...profile(`baseline-${role}`), 'dist/test/bench/baselines.js', role], env)
  const pricing = service('pricing', 'start:pricing')
  const worker = service('worker', 'start:worker')
  const gateway = service('gateway', 'start:gateway')
  const sender = service('webhook-sender', 'start:webhook-sender')

  const baselineEnv = { REDIS_URL, DATABASE_URL, QUEUE_PREFIX: BASELINE_PREFIX, BASELINE_SCHEMA, WALLET_ID: walletId }
  const baselineProcesses = [
    baseline('quote-back', { ...baselineEnv, PORT: String(quoteBack) }),
    baseline('quote-front', { ...baselineEnv, PORT: String(quoteFront), BACK_URL: `http://127.0.0.1:${quoteBack}` }),
    baseline('place-front', { ...baselineEnv, PORT: String(placeFront) }),
    baseline('place-worker', { ...baselineEnv, PORT: String(placeWorker) }),
    baseline('webhook-worker', { ...baselineEnv, PORT: String(webhookWorker), WEBHOOK_URL: receiver.url, WEBHOOK_SECRET: baselineSecret }),
    baseline('location', { ...baselineEnv, PORT: String(locationBaseline) }),
  ]
  const pids = (list: Child[]) => Object.fromEntries(list.map((child) => [child.name, child.process.pid!]))
  const projectPids = pids([gateway, pricing, worker, sender])
  const baselinePids = pids(baselineProcesses)

  await Promise.all([
    waitReady(`http://127.0.0.1:${gatewayPort}/readyz`),
    waitReady(`http://127.0.0.1:${pricingPort}/readyz`),
    waitReady(`http://127.0.0.1:${workerPort}/readyz`),
    waitReady(`http://127.0.0.1:${senderPort}/readyz`),
    ...[quoteBack, quoteFront, placeFront, placeWorker, webhookWorker, locationBaseline].map((port) => waitReady(`http://127.0.0.1:${port}/healthz`)),
  ])

  // Memory before the first case, the gateway's and the baseline fronts' (report.ts, Memory).
  const atRest = (child: Child) => ({ name: child.name.replace('baseline-', ''), pid: child.process.pid!, restMb: rssMb(child.process.pid!) })
  const gatewayAtRest = atRest(gateway)
  const frontsAtRest = baselineProcesses.filter((child) => ['baseline-quote-front', 'baseline-place-front', 'baseline-location'].includes(child.name)).map(atRest)
  const resident = ({ pid, restMb }: ReturnType<typeof atRest>): Resident => ({ restMb, peakMb: peakRssMb(pid) })

  const auth = { authorization: `Bearer ${account.apiKey}` }
  const gatewayUrl = `http://127.0.0.1:${gatewayPort}`
  const placement = (count: number): Pick<CaseDefinition, 'project' | 'baseline' | 'bare'> => {
    const body = JSON.stringify(Array.from({ length: count }, () => SHIPMENT))
    return {
      project: { url: `${gatewayUrl}/v2/business/order`, headers: auth, body },
      baseline: { url: `http://127.0.0.1:${placeFront}/place`, headers: auth, body },
      bare: { url: `http://127.0.0.1:${placeFront}/place-bare`, headers: auth, body },
    }
  }
  const definitions: Record<string, CaseDefinition> = {
    quote: {
      name: 'quote', connections: 50, unitsPerRequest: 1, unit: 'quotes/s',
      project: { url: `${gatewayUrl}/v2/business/order/cost`, headers: auth, body: JSON.stringify(QUOTE_BODY) },
      baseline: { url: `http://127.0.0.1:${quoteFront}/quote`, headers: auth, body: JSON.stringify(QUOTE_BODY) },
      bare: { url: `http://127.0.0.1:${quoteFront}/quote-bare`, headers: auth, body: JSON.stringify(QUOTE_BODY) },
    },
    'place-1': { name: 'place-1', connections: 32, unitsPerRequest: 1, unit: 'orders/s', ...placement(1) },
    'place-100': { name: 'place-100', connections: 8, unitsPerRequest: 100, unit: 'orders/s', ...placement(100) },
    // Ten businesses placing at once: no wallet row is shared, so this is where either side can scale.
    'place-1-ten': {
      name: 'place-1-ten', connections: 32, unitsPerRequest: 1, unit: 'orders/s',
      project: { ...placement(1).project, spread: spread.map((business) => ({ authorization: `Bearer ${business.apiKey}` })) },
      baseline: { ...placement(1).baseline, spread: spreadWallets.map((id) => ({ 'x-wallet-id': id })) },
      bare: { ...placement(1).bare, spread: spreadWallets.map((id) => ({ 'x-wallet-id': id })) },
    },
  }

  const timed = (definition: CaseDefinition): CaseSides => {
    const options = { connections: definition.connections, unitsPerRequest: definition.unitsPerRequest }
    return {
      connections: definition.connections,
      unit: definition.unit,
      seconds: SECONDS,
      baseline: (seconds) => drive(definition.baseline, { ...options, seconds, processes: baselinePids }),
      bare: (seconds) => drive(definition.bare, { ...options, seconds, processes: baselinePids }),
      project: (seconds) => drive(definition.project, { ...options, seconds, watchPid: gateway.process.pid, processes: projectPids }),
    }
  }
  // A burst of events timed until the receiver has them all (webhooks.ts), not a timed load.
  const webhooks = async (): Promise<CaseSides> => {
    const sql = createSql(config, { max: 2 })
    const sides = await webhookCase({
      sql, gatewayUrl, auth, businessId: account.businessId, receiver, redisUrl: REDIS_URL, baselinePrefix: BASELINE_PREFIX, baselineSecret,
      events: WEBHOOK_EVENTS, deadlineMs: WEBHOOK_DEADLINE_S * 1000,
    }).catch(async (err) => { await sql.end(); throw err })
    return {
      connections: webhookConcurrency,
      unit: 'deliveries/s',
      seconds: WEBHOOK_DEADLINE_S,
      // Baseline (c) is the bare sender the issue names; no same-work sender baseline is built.
      bare: () => sides.baseline(baselinePids),
      project: () => sides.project(projectPids),
      close: () => sides.close().finally(() => sql.end()),
    }
  }
  const courierLocation = async (): Promise<CaseSides> => {
    const sql = createSql(config, { max: 8 })
    const connections = 50
    const sides = await locationCase({
      sql, gatewayUrl, baselineUrl: `http://127.0.0.1:${locationBaseline}`, couriers: LOCATION_COURIERS, connections,
      store: { sql, schema: BASELINE_SCHEMA, redisUrl: REDIS_URL, prefix: BASELINE_PREFIX },
      processes: { project: projectPids, baseline: baselinePids }, watchPid: gateway.process.pid!,
    }).finally(() => sql.end())
    // Baseline (d): bare is the stack DESIGN 14 names; same-work, the contract's ping at its least.
    return { connections, unit: 'pings/s', seconds: SECONDS, ...sides }
  }
  // The dispatcher, started as the launcher starts it, for this case only (couriers.ts says why).
  const dispatch = async (): Promise<CaseSides> => {
    const dispatcher = service('dispatcher', 'start:dispatcher')
    const sql = createSql(config, { max: 8 })
    try {
      await waitReady(`http://127.0.0.1:${dispatcherPort}/readyz`)
      await drainDispatchQueue(config)
      const sides = await dispatchCase({
        sql, gatewayUrl, apiKeys: dispatchAccounts.map((business) => business.apiKey), couriers: DISPATCH_COURIERS, rate: DISPATCH_RATE, deadlineMs: DISPATCH_DEADLINE_S * 1000,
        processes: { ...projectPids, dispatcher: dispatcher.process.pid! },
      })
      return {
        connections: DISPATCH_COURIERS, unit: 'placements/s', seconds: SECONDS,
        project: (seconds) => sides.run(seconds).then((run) => {
          const d = run.dispatch!
          log(`    dispatch: ${d.placed} placed, ${d.offered} offered, ${d.missed} missed, ${d.deliveries} delivered; created to offer of those offered p50 ${d.offeredP50Ms} ms p99 ${d.offeredP99Ms} ms, max of all ${d.maxMs} ms`)
          log(`    request to offer p50 ${d.fromRequestP50Ms} ms p99 ${d.fromRequestP99Ms} ms; courier turnaround (offer to delivered) p50 ${d.turnaroundP50Ms} ms p99 ${d.turnaroundP99Ms} ms`)
          return run
        }),
        close: () => sides.close().finally(() => Promise.all([sql.end(), stop(dispatcher)])),
      }
    } catch (err) {
      await Promise.all([sql.end(), stop(dispatcher)])
      throw err
    }
  }
  const known = [...Object.keys(definitions), 'webhooks', 'courier-location', 'dispatch']
  const unknown = stackCases.find((name) => !known.includes(name))
  if (unknown) throw new Error(`unknown case ${unknown}; known: ${known.join(', ')}`)

  const results: CaseResult[] = []
  for (const name of stackCases) {
    const sides = name === 'webhooks' ? await webhooks() : name === 'courier-location' ? await courierLocation() : name === 'dispatch' ? await dispatch() : timed(definitions[name])
    const unit = sides.unit
    const baselineRuns: Run[] = []
    const bareRuns: Run[] = []
    const projectRuns: Run[] = []
    try {
      if (WARMUP > 0) {
        await sides.baseline?.(WARMUP)
        await sides.bare?.(WARMUP)
        await sides.project(WARMUP)
      }
      for (let round = 0; round < ROUNDS; round++) {
        // Alternating, so a drift of the machine (another process, the disk) hits every side alike.
        // Always in this order: taking turns at going first puts a side right after itself at some
        // round's start (docs/performance.md, Method).
        if (sides.baseline) baselineRuns.push(await sides.baseline(SECONDS))
        if (sides.bare) bareRuns.push(await sides.bare(SECONDS))
        projectRuns.push(await sides.project(SECONDS))
        const [b, r, p] = [sides.baseline && baselineRuns.at(-1), sides.bare && bareRuns.at(-1), projectRuns.at(-1)!]
        const others = [b && ['same-work', b] as const, r && ['bare', r] as const].filter((side) => !!side)
        const before = others.map(([label, run]) => `${label} ${run.unitsPerSecond.toFixed(0)} ${unit} p99 ${run.p99Ms} ms, `).join('')
        log(`  ${name} round ${round + 1}: ${before}project ${p.unitsPerSecond.toFixed(0)} ${unit} p50 ${p.p50Ms} ms p99 ${p.p99Ms} ms, non-2xx ${others.map(([, run]) => `${run.non2xx}/`).join('')}${p.non2xx + p.errors}`)
        log(`    cores used: ${others.map(([label, run]) => `${label} ${formatCpu(run.cpu)}; `).join('')}project ${formatCpu(p.cpu)}`)
        if (p.connectionsOpened !== undefined) log(`    connections the receiver accepted: ${others.map(([label, run]) => `${label} ${run.connectionsOpened}, `).join('')}project ${p.connectionsOpened}`)
        log(`    gateway RSS now ${rssMb(gateway.process.pid!).toFixed(0)} MB, peak so far ${peakRssMb(gateway.process.pid!).toFixed(0)} MB`)
      }
    } finally {
      // A failed clean-up is told but must not hide the error of a failed round.
      await sides.close?.().catch((err) => log(`  ${name}: clean-up failed: ${errorMessage(err)}`))
    }
    results.push({ name, connections: sides.connections, unit, seconds: sides.seconds, baseline: summarise(baselineRuns), bare: summarise(bareRuns), project: summarise(projectRuns)! })
  }
  await receiver.close()

  const memory: Memory = { gateway: resident(gatewayAtRest), fronts: Object.fromEntries(frontsAtRest.map((front) => [front.name, resident(front)])) }
  console.log(formatTable(results, memory))
  writeReport(started, {
    settings: {
      seconds: SECONDS, rounds: ROUNDS, warmup: WARMUP, cases: caseNames, webhookEvents: WEBHOOK_EVENTS, locationCouriers: LOCATION_COURIERS,
      dispatchCouriers: DISPATCH_COURIERS, dispatchRate: DISPATCH_RATE, dispatchBusinesses: DISPATCH_BUSINESSES, dispatchDeadlineS: DISPATCH_DEADLINE_S,
    },
    gatewayPeakRssMb: memory.gateway.peakMb,
    memory,
    cases: results,
    verdicts: verdicts(results, memory),
    ...(history && { history }),
  })
}

/** Writes the run's figures as JSON into RESULTS_DIR and says where. */
function writeReport(started: Date, figures: Record<string, unknown>): void {
  const report = {
    startedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpuModel: os.cpus()[0]?.model, node: process.version, totalMemMb: Math.round(os.totalmem() / 2 ** 20) },
    ...figures,
  }
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = path.join(RESULTS_DIR, `${started.toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify(report, null, 2) + '\n')
  console.log(`results: ${path.relative(process.cwd(), file) || file}`)
}

function formatCpu(cpu: Record<string, number>): string {
  return Object.entries(cpu).filter(([, share]) => share >= 0.01).map(([name, share]) => `${name.replace('baseline-', '')} ${share.toFixed(2)}`).join(', ')
}

function log(line: string) {
  process.stderr.write(`${line}\n`)
}

try {
  await main()
} catch (err) {
  console.error('bench failed:', err)
  process.exitCode = 1
} finally {
  await stopAll()
  if (!process.env.BENCH_KEEP) {
    await clearRedis([QUEUE_PREFIX, BASELINE_PREFIX]).catch(() => {})
    await dropSchemas().catch(() => {})
  }
  // Nothing the bench opened should outlive it; exit even if a client lingers.
  process.exit(process.exitCode ?? 0)
}
