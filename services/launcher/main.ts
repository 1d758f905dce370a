import { randomBytes } from 'node:crypto'
import { ConfigError, launcherEnv, loadConfig, publicBaseUrl, type LauncherConfig } from '../../shared/config.js'
import { migrate } from '../../shared/db/migrate.js'
import { createSql, databaseWhere } from '../../shared/db/sql.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { demoSeed } from '../../shared/accounts/demo-seed.js'
import { demoConsoleUsers } from '../../shared/console/users.js'
import { demoCourier } from '../../shared/couriers/fixed-couriers.js'
import { issueLoginCode } from '../../shared/couriers/login.js'
import { publishInvalidation } from '../../shared/invalidation.js'
import { createRedis } from '../../shared/redis.js'
import { answers, DependencyDownError, ensureLocalDependencies, redisWhere } from './local-dependencies.js'
import { localWebhookEnv } from './local-webhooks.js'
import { devWebhookSecretKeys } from '../../shared/webhooks/dev-key-ring.js'
import { nodeArgsOf } from './scripts.js'
import { PORT_STEP, replicaName, replicaPort, replicasFromArgs, ReplicasError, SERVICE_NAMES, type ServiceName } from './replicas.js'
import { supervise, type ServiceSpec } from './supervise.js'

/*
 * `npm start`: one command for a newcomer. It prepares the database, seeds the demo account,
 * then runs the services as separate processes, exactly as their containers run them,
 * and restarts any that dies (supervise.ts).
 */

let config: LauncherConfig
let replicas: Record<ServiceName, number>
try {
  config = loadConfig(launcherEnv)
  replicas = replicasFromArgs(process.argv.slice(2))
} catch (err) {
  console.error(err instanceof ConfigError || err instanceof ReplicasError ? err.message : err)
  process.exit(1)
}

try {
  for (const line of await ensureLocalDependencies(config)) console.log(`launcher: ${line}`)
} catch (err) {
  if (!(err instanceof DependencyDownError)) throw err
  console.error(`launcher: ${err.message}`)
  process.exit(1)
}

/** A database the launcher cannot prepare (a wrong role or password, no right to create it, a remote one down): one line, no stack. */
function cannotPrepare(err: unknown): never {
  console.error(`launcher: cannot prepare the database at ${databaseWhere(config.DATABASE_URL)}: ${errorMessage(err)}`)
  process.exit(1)
}

/**
 * A Redis the launcher cannot reach (one at another address that is down, a wrong password): every
 * service needs it, so one line naming where, never its credentials, and no service started.
 * A local one that was down was started above (local-dependencies.ts).
 */
function cannotReachRedis(err: unknown): never {
  console.error(`launcher: Redis at ${redisWhere(config)} cannot be reached: ${errorMessage(err)}`)
  process.exit(1)
}

await migrate(config).catch(cannotPrepare)
const sql = createSql(config, { max: 2 })
const redis = createRedis(config, { maxRetriesPerRequest: 1, lazyConnect: true })
// ioredis's connect() rejects with only "Connection is closed."; its error event says why.
let redisFailure: unknown
redis.on('error', (err) => (redisFailure = err))
let demo
let consoleUsers
let courier
let courierCode
try {
  await redis.connect().catch((err: unknown) => cannotReachRedis(redisFailure ?? err))
  // A lost message costs a cache TTL, never the start-up.
  demo = await demoSeed(sql, (message) => publishInvalidation(redis, config.QUEUE_PREFIX, message).catch(() => undefined), config)
  consoleUsers = await demoConsoleUsers(sql, demo.business_id, config.CONSOLE_PUBLIC_URL)
  courier = await demoCourier(sql)
  // A fresh one-time code each run: the demo rider logs in to the courier web app with it.
  courierCode = courier ? await issueLoginCode(sql, courier.courier_id, config.COURIER_CODE_TTL_MIN) : null
} catch (err) {
  cannotPrepare(err)
} finally {
  redis.disconnect()
  await sql.end()
}

// One token per run unless the operator set one: only the gateway (and the worker, later) may
// call pricing. Pricing's, the worker's, the webhook sender's and the dispatcher's ports serve this machine only;
// the gateway is the public door.
const shared = {
  INTERNAL_TOKEN: config.INTERNAL_TOKEN ?? randomBytes(32).toString('base64url'),
  // Pricing signs held quotes with it and the worker checks them: one key per run, like the token.
  QUOTE_SIGNING_KEY: config.QUOTE_SIGNING_KEY ?? randomBytes(32).toString('base64url'),
  // Delivery photo links name the gateway, whichever service takes the delivery (the API or the courier app).
  PUBLIC_BASE_URL: publicBaseUrl(config),
  // The console's address as this run has it (loadConfig follows CONSOLE_PORT), the same for every
  // replica, whose own CONSOLE_PORT differs.
  CONSOLE_PUBLIC_URL: config.CONSOLE_PUBLIC_URL,
}
// Console sessions last as long as the run unless the operator set a secret of their own.
const consoleSecret = { CONSOLE_SESSION_SECRET: process.env.CONSOLE_SESSION_SECRET || randomBytes(32).toString('base64url') }
const internal = { ...shared, HOST: '127.0.0.1' }
const localWebhooks = { ...localWebhookEnv(config.NODE_ENV, process.env), WEBHOOK_SECRET_KEYS: config.WEBHOOK_SECRET_KEYS ?? devWebhookSecretKeys() }
const health = (port: number) => `http://127.0.0.1:${port}/healthz`
const ENVS: Record<ServiceName, Record<string, string>> = {
  pricing: internal,
  worker: internal,
  'webhook-sender': { ...internal, ...localWebhooks },
  console: { ...consoleSecret, ...localWebhooks, PUBLIC_BASE_URL: shared.PUBLIC_BASE_URL, CONSOLE_PUBLIC_URL: config.CONSOLE_PUBLIC_URL },
  dispatcher: internal,
  gateway: { ...shared, ...localWebhooks },
}
type PortSetting = keyof LauncherConfig & `${string}_PORT`
/** Each service's port and ops port settings. */
const PORTS: Record<ServiceName, readonly [PortSetting, PortSetting]> = {
  pricing: ['PRICING_PORT', 'PRICING_OPS_PORT'],
  worker: ['WORKER_PORT', 'WORKER_OPS_PORT'],
  'webhook-sender': ['WEBHOOK_SENDER_PORT', 'WEBHOOK_SENDER_OPS_PORT'],
  console: ['CONSOLE_PORT', 'CONSOLE_OPS_PORT'],
  dispatcher: ['DISPATCHER_PORT', 'DISPATCHER_OPS_PORT'],
  gateway: ['GATEWAY_PORT', 'GATEWAY_OPS_PORT'],
}
const portOf = (service: ServiceName, n: number) => replicaPort(config[PORTS[service][0]], n)

/** Replica n of a service, on its own ports; the gateways call the pricing replicas started here, taking turns among several (a PRICING_URL of the operator's stands when there is one). */
function replicaSpec(service: ServiceName, n: number): ServiceSpec {
  const [portSetting, opsPortSetting] = PORTS[service]
  const port = portOf(service, n)
  const env: Record<string, string> = { ...ENVS[service], [portSetting]: String(port), [opsPortSetting]: String(replicaPort(config[opsPortSetting], n)) }
  if (service === 'gateway' && (replicas.pricing > 1 || !process.env.PRICING_URL)) env.PRICING_URL = `http://127.0.0.1:${portOf('pricing', ((n - 1) % replicas.pricing) + 1)}`
  return { name: replicaName(service, n), args: nodeArgsOf(`start:${service}`), env, healthUrl: health(port) }
}
/** Every replica this run starts: the service and its number, from 1. */
const REPLICAS = SERVICE_NAMES.flatMap((service) => Array.from({ length: replicas[service] }, (_, i) => ({ service, n: i + 1 })))
const SERVICES: ServiceSpec[] = REPLICAS.map(({ service, n }) => replicaSpec(service, n))

/*
 * A program already answering on a port a child is to listen on would answer the banner's
 * `/readyz` and the supervisor's `/healthz` in the child's place, while the child itself exits
 * on EADDRINUSE: the stack would be announced ready with none of it running. So before any child
 * starts, a port that something answers on stops the launcher, naming the setting that moves it.
 */
const wanted = REPLICAS.flatMap(({ service, n }) => PORTS[service].map((setting) => ({ name: replicaName(service, n), n, setting, port: replicaPort(config[setting], n) })))
const answering = await Promise.all(wanted.map(({ port }) => port !== 0 && answers({ host: '127.0.0.1', port })))
const taken = wanted.find((_, i) => answering[i])
if (taken) {
  const replica = taken.n > 1 ? ` (replica ${taken.n} takes ${taken.setting} + ${PORT_STEP * (taken.n - 1)})` : ''
  console.error(`launcher: ${taken.name}'s port ${taken.port} is already in use by another program; stop it or set ${taken.setting} to a free port${replica}`)
  process.exit(1)
}

let stopping = false
const services = supervise(SERVICES, () => stopAll(1))

function stopAll(code: number) {
  if (stopping) return
  stopping = true
  // Each service drains within its own 30 s; this bound only covers one that hangs anyway.
  const forced = setTimeout(() => process.exit(code), 35_000)
  void services.stop().then(() => {
    clearTimeout(forced)
    process.exit(code)
  })
}

process.once('SIGINT', () => stopAll(0))
process.once('SIGTERM', () => stopAll(0))

const base = `http://127.0.0.1:${config.GATEWAY_PORT}`
// Many replicas starting at once on a busy machine take a while: the banner waits up to 2 minutes.
const readyBy = Date.now() + 120_000
let announced = false
while (!announced && Date.now() < readyBy && !stopping) {
  // Every gateway replica, not the first only: the banner names each of them.
  const ready = await Promise.all(Array.from({ length: replicas.gateway }, (_, i) => fetch(`http://127.0.0.1:${portOf('gateway', i + 1)}/readyz`).then((response) => response.ok, () => false)))
  if (ready.every(Boolean)) {
    console.log('')
    console.log(`Courier API ready at ${base}/v2`)
    if (replicas.gateway > 1) {
      // No proxy of ours: each gateway is its own address; in production a load balancer spreads requests.
      const gateways = Array.from({ length: replicas.gateway }, (_, i) => `http://127.0.0.1:${portOf('gateway', i + 1)}/v2`)
      console.log(`Gateways, one per replica (put a load balancer in front for one address): ${gateways.join(' ')}`)
    }
    console.log(`Demo business ${demo.business_id}, wallet ${demo.balance} ${demo.currency}`)
    console.log(`Demo API key: ${demo.api_key}`)
    console.log(`Sandbox API key: ${demo.test_api_key} (test orders, a test wallet, and a courier that delivers them by itself)`)
    console.log(`Try: curl -H "Authorization: Bearer ${demo.api_key}" ${base}/v2/business/rate-cards`)
    // At the address the document names as its server: "Try it out" calls it, and the gateway
    // answers only pages of its own origin (localhost and 127.0.0.1 are two).
    console.log(`API reference: ${shared.PUBLIC_BASE_URL}/docs (the OpenAPI document: ${shared.PUBLIC_BASE_URL}/openapi.json)`)
    console.log(courier
      ? `Demo courier token: ${courier.courier_token} (go on shift: POST ${base}/v2/courier/shift; or run npm run simulate -- --couriers 20)`
      : 'Demo courier: disabled by an operator, or its phone given to another courier (courier:create makes another)')
    if (courier && courierCode) {
      console.log(`Courier app: ${config.CONSOLE_PUBLIC_URL}/courier (demo rider: phone ${courier.phone}, one-time code ${courierCode.code}, valid ${config.COURIER_CODE_TTL_MIN} min; courier:code --courier ${courier.courier_id} makes another)`)
    }
    console.log(`Console: ${config.CONSOLE_PUBLIC_URL}/console`)
    for (const user of consoleUsers) {
      console.log(user.link
        ? `  ${user.role} ${user.email}: set a password at ${user.link} (one use, 24 h)`
        : `  ${user.role} ${user.email}: log in with the password you set`)
    }
    console.log('')
    announced = true
    break
  }
  await new Promise((resolve) => setTimeout(resolve, 200))
}
if (!announced && !stopping) console.error(`launcher: the gateway at ${base} is not ready after 2 minutes; its lines above say why`)
