import { isIP } from 'node:net'
import { z } from 'zod'
import { productionProblems } from './production-config.js'

/** Raised when the environment does not describe a runnable service; main() prints it and exits. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback)
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback)

/** `minLat,minLng,maxLat,maxLng`: the box quotes and placements accept points in (docs/contracts.md). */
const boundingBox = z
  .string()
  .transform((text) => text.split(',').map((part) => (part.trim() === '' ? Number.NaN : Number(part))))
  .pipe(
    z
      .tuple([z.number().min(-90).max(90), z.number().min(-180).max(180), z.number().min(-90).max(90), z.number().min(-180).max(180)], {
        error: 'must be minLat,minLng,maxLat,maxLng',
      })
      .refine(([minLat, minLng, maxLat, maxLng]) => minLat < maxLat && minLng < maxLng, 'must be minLat,minLng,maxLat,maxLng with min below max'),
  )
  .transform(([minLat, minLng, maxLat, maxLng]) => ({ minLat, minLng, maxLat, maxLng }))

/** A Redis Cluster's seed nodes, `host:port,host:port,…`. */
const clusterNodes = z
  .string()
  .transform((text) => text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== ''))
  .pipe(z.array(z.string().regex(/^[^\s:,]+:\d{1,5}$/, 'must be host:port,host:port,…')).min(1, 'must name at least one host:port'))
  .transform((entries) => entries.map((entry) => {
    const colon = entry.lastIndexOf(':')
    return { host: entry.slice(0, colon), port: Number(entry.slice(colon + 1)) }
  }))

/**
 * fastify's `trustProxy`: `true` or `false`, a number of proxy hops, or a comma list of proxy
 * addresses and CIDR ranges.
 */
function trustProxy(value: string, ctx: z.RefinementCtx): boolean | number | string[] {
  if (value === 'true' || value === 'false') return value === 'true'
  if (/^\d+$/.test(value)) return Number(value)
  const entries = value.split(',').map((address) => address.trim()).filter((address) => address.length > 0)
  const bad = entries.find((entry) => !isProxyAddress(entry))
  if (bad !== undefined || entries.length === 0) {
    ctx.addIssue({ code: 'custom', message: `must be true, false, a number of hops, or a comma list of IP addresses, CIDR ranges, loopback, linklocal or uniquelocal${bad === undefined ? '' : ` (not ${JSON.stringify(bad)})`}` })
    return z.NEVER
  }
  return entries
}

/** An entry `proxy-addr` (fastify's trustProxy) takes: a named range, an address, or address/prefix. */
function isProxyAddress(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true
  const [address = '', prefix, ...rest] = entry.split('/')
  const family = isIP(address)
  if (family === 0 || rest.length > 0) return false
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128))
}

/** Settings every process shares (the CLI and migrations too): where the data lives and what the deployment charges in. */
const GATEWAY_DEFAULT_PORT = 3000

/**
 * Where integrators call the API (PUBLIC_BASE_URL), or the gateway on this machine when unset:
 * its own port where the service knows it, else the default one.
 */
export function publicBaseUrl(config: { PUBLIC_BASE_URL?: string | undefined; GATEWAY_PORT?: number }): string {
  return config.PUBLIC_BASE_URL ?? `http://localhost:${config.GATEWAY_PORT ?? GATEWAY_DEFAULT_PORT}`
}

export const commonEnv = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  DATABASE_URL: z.string().url().default('postgres://root@127.0.0.1:5432/courier'),
  // Tests point each file at its own schema; production leaves it at public.
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]*$/, 'must be a lower-case SQL identifier').default('public'),
  DATABASE_POOL_MAX: positiveInt(10),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379'),
  // A Redis command a request waits on fails after this, so a black-holed Redis costs each
  // request a second (the rate limit fails open, a placement answers 503), not minutes.
  REDIS_COMMAND_TIMEOUT_MS: positiveInt(1000),
  // Set: the deployment's Redis is a Redis Cluster reached through these seed nodes (REDIS_URL then
  // gives only the user, password and rediss:); unset: the one Redis at REDIS_URL.
  REDIS_CLUSTER_NODES: clusterNodes.optional(),
  // The hash tag keeps every Redis key of the deployment in one Redis Cluster slot, so BullMQ's
  // scripts and ours (multi-key by design) never cross slots.
  QUEUE_PREFIX: z.string().regex(/^[^{]*\{[^}]+\}/, 'must carry a {…} hash tag (every key of the deployment shares its Redis Cluster slot)').default('{courier}'),
  CURRENCY: z.string().regex(/^[A-Z]{3}$/, 'must be a three-letter ISO 4217 code').default('NGN'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // What a business's test wallet starts with (major units), credited when its first test key is made.
  SANDBOX_WALLET_START: z.coerce.number().min(0).max(1e12).default(1_000_000),
  // Where people open the console: set-password links (CLI, launcher) and the cookie's Secure flag.
  CONSOLE_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).transform((url) => url.replace(/\/+$/, '')).default('http://localhost:3004'),
  // How long a courier's one-time login code for the courier web app works (`courier:create`, `courier:code`, `npm start`).
  COURIER_CODE_TTL_MIN: z.coerce.number().positive().max(24 * 60).default(15),
  // Where recipients open an order's tracking page (`/t/{token}`, served by the console); the console's URL when unset.
  TRACKING_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).transform((url) => url.replace(/\/+$/, '')).optional(),
  // The address integrators call: the OpenAPI document's server URL and the base of every
  // proof photo link; http://localhost:GATEWAY_PORT when unset (the launcher sets it for its children).
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).transform((url) => url.replace(/\/+$/, '')).optional(),
  // Proof-of-delivery photos (DESIGN 14): a local directory, or an S3-compatible bucket when S3_BUCKET is set.
  STORAGE_DIR: z.string().min(1).default('var/storage'),
  S3_BUCKET: z.string().min(1).optional(),
  S3_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  // The store as a browser reaches it, for photo links, where the services reach it by another
  // name (compose: http://minio:9000 inside, http://localhost:9000 outside). Unset: S3_ENDPOINT.
  S3_PUBLIC_ENDPOINT: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' }).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  // MinIO and most S3-compatible stores want path-style URLs (endpoint/bucket/key).
  S3_FORCE_PATH_STYLE: z.stringbool().default(false),
  // Both or neither; without them the AWS SDK's own chain (a pod's role, a profile) is used.
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
})

/** A long-running service: the address it listens on and the bounds on every session of its pool (not migrations or the CLI). */
const serving = {
  HOST: z.string().default('0.0.0.0'),
  // A wait past them is a 503.
  PG_STATEMENT_TIMEOUT_MS: positiveInt(5000),
  PG_LOCK_TIMEOUT_MS: positiveInt(5000),
  PG_IDLE_TX_TIMEOUT_MS: positiveInt(30000),
  // A request slower than this is logged even when it succeeded.
  SLOW_REQUEST_MS: positiveInt(1000),
  // Bounds both receiving a request and handling it: past it the answer is a 503 with the error body.
  REQUEST_TIMEOUT_MS: positiveInt(40000),
}

/**
 * A streaming replica for list and backfill reads (DESIGN 16); unset, every read goes to the
 * primary. Lists read there may lag a write by the replica's replay lag (docs/scaling.md).
 */
const readReplica = {
  DATABASE_READ_URL: z.string().url().optional(),
}

/** Where addresses and roads come from and which points are served: pricing quotes with it, the worker places with it. */
const locating = {
  GEOCODER: z.enum(['gazetteer', 'nominatim']).default('gazetteer'),
  NOMINATIM_URL: z.string().url().default('https://nominatim.openstreetmap.org'),
  GEOCODER_TIMEOUT_MS: positiveInt(2000),
  GEOCODE_CACHE_TTL_S: positiveInt(7 * 24 * 3600),
  ROUTING_URL: z.string().url().optional(),
  ROUTING_TIMEOUT_MS: positiveInt(2000),
  // Nigeria's box by default; shared, so quotes and placements refuse the same points.
  SERVICE_AREA_BBOX: boundingBox.default({ minLat: 4, minLng: 2.5, maxLat: 14, maxLng: 15 }),
}

/** The bearer value internal calls carry (docs/contracts.md); `npm start` makes one per run. */
const internalToken = z.string({ error: 'is required (at least 16 characters)' }).min(16, 'must be at least 16 characters')
const calling = { INTERNAL_TOKEN: internalToken }

/** An HMAC key: at least 32 characters. */
const hmacKey = z.string({ error: 'is required (at least 32 characters)' }).min(32, 'must be at least 32 characters')
/** The HMAC key of held quotes (pricing signs, the worker verifies); `npm start` makes one per run. */
const quoteSigning = { QUOTE_SIGNING_KEY: hmacKey }

/** How long an Idempotency-Key replays its stored response (gateway) before the sweep frees it (worker). */
const idempotency = { IDEMPOTENCY_TTL_H: positiveInt(24) }

/**
 * A queue worker (placement worker, dispatcher, webhook sender) that has started no job for this
 * long while jobs are due answers `/healthz` 503, so it is restarted (shared/queue-liveness.ts).
 */
const queueWorker = { QUEUE_STUCK_S: positiveInt(60) }

/** One key of a key ring: its id and 32 bytes. */
export interface SecretKey {
  id: string
  key: Buffer
}

/**
 * `id:base64key,…`, each key 32 bytes: the first encrypts webhook secrets, every one decrypts
 * (shared/webhooks/secret-box.ts). `npm start` keeps a development key under `.dev-secrets/`.
 */
const secretKeyRing = z
  .string({ error: 'is required: id:base64key with a 32-byte key (openssl rand -base64 32)' })
  .transform((text, context): SecretKey[] => {
    const keys = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '').map((entry) => {
      const colon = entry.indexOf(':')
      return { id: entry.slice(0, colon), key: Buffer.from(entry.slice(colon + 1), 'base64') }
    })
    if (keys.length === 0 || keys.some((entry) => !/^[A-Za-z0-9_-]{1,64}$/.test(entry.id) || entry.key.length !== 32)) {
      context.addIssue({ code: 'custom', message: 'must be id:base64key[,id:base64key…], each id 1-64 letters, digits, _ or -, each key 32 bytes in base64' })
      return z.NEVER
    }
    return keys
  })
const webhookSecrets = { WEBHOOK_SECRET_KEYS: secretKeyRing }

/** How strict webhook URLs are: both relaxed under `npm start` (the launcher sets them), strict by default. */
const webhookUrls = {
  WEBHOOK_ALLOW_HTTP: z.stringbool().default(false),
  WEBHOOK_ALLOW_PRIVATE: z.stringbool().default(false),
}

export const pricingEnv = commonEnv.extend({
  ...serving,
  // Internal: this machine only unless a container or manifest opens it (HOST=0.0.0.0).
  HOST: z.string().default('127.0.0.1'),
  ...locating,
  ...calling,
  ...quoteSigning,
  PRICING_PORT: port(3001),
  PRICING_OPS_PORT: port(9465),
  RATE_CARD_CACHE_TTL_S: positiveInt(300),
  /** How long a quote holds its price (docs/contracts.md): `expires_at` is this long after the quote. */
  QUOTE_TTL_S: positiveInt(900),
})

export const gatewayEnv = commonEnv.extend({
  ...serving,
  ...readReplica,
  ...calling,
  ...idempotency,
  GATEWAY_PORT: port(GATEWAY_DEFAULT_PORT),
  GATEWAY_OPS_PORT: port(9464),
  PRICING_URL: z.string().url().default('http://127.0.0.1:3001'),
  PRICING_CONNECTIONS: positiveInt(64),
  PRICING_TIMEOUT_MS: positiveInt(10000),
  BODY_LIMIT_BYTES: positiveInt(1048576),
  RATE_LIMIT_MAX: z.coerce.number().int().min(0).default(1200),
  RATE_LIMIT_WINDOW_MS: positiveInt(60000),
  // Below REQUEST_TIMEOUT_MS, so a placement answers its own 503 (with its placement_id) first.
  PLACEMENT_TIMEOUT_MS: positiveInt(30000),
  API_KEY_CACHE_TTL_S: positiveInt(300),
  // Requests answered 401 per client address and minute before they are answered 429; 0 turns it off.
  AUTH_FAILURE_LIMIT: z.coerce.number().int().min(0).default(60),
  TRUST_PROXY: z.string().default('false').transform(trustProxy),
  // How long a proof photo's link works without the API key (DESIGN 14).
  PHOTO_LINK_TTL_S: positiveInt(900),
  ...webhookUrls,
  ...webhookSecrets,
}).refine((config) => config.PLACEMENT_TIMEOUT_MS < config.REQUEST_TIMEOUT_MS, {
  path: ['PLACEMENT_TIMEOUT_MS'],
  message: 'must be below REQUEST_TIMEOUT_MS, so a placement answers its own 503 (with its placement_id) before the request bound answers for it',
})

/**
 * How long history is kept: the worker erases and prunes with it, the migrate CLI drops month
 * partitions with it (docs/scaling.md).
 */
const retention = {
  // Shipments' names, phones, e-mails and addresses are erased from placements this old; trails
  // go a month partition at a time once the whole month is this old.
  PERSONAL_DATA_RETENTION_D: positiveInt(90),
  // Events and webhook delivery attempts older than this go, a whole month partition at a time.
  EVENT_RETENTION_D: positiveInt(30),
}

export const workerEnv = commonEnv.extend({
  ...queueWorker,
  ...serving,
  ...locating,
  ...idempotency,
  ...quoteSigning,
  WORKER_PORT: port(3002),
  WORKER_OPS_PORT: port(9466),
  WORKER_CONCURRENCY: positiveInt(16),
  // How long a job may run without renewing its lock before BullMQ hands it to another worker.
  WORKER_LOCK_MS: positiveInt(30000),
  WORKER_STALLED_INTERVAL_MS: positiveInt(30000),
  // A pending placement this old whose job is missing or failed for good is settled not processed.
  PLACEMENT_ORPHAN_AFTER_S: positiveInt(45),
  ...retention,
  // The sandbox courier moves a test order one step this often (decimals allowed, for tests).
  SANDBOX_STEP_S: z.coerce.number().min(0.01).max(86400).default(30),
})

/** Dispatch (DESIGN 14): who is offered an order, for how long, and when a round starts again. */
const dispatching = {
  DISPATCH_RADIUS_KM: z.coerce.number().positive().max(500).default(10),
  DISPATCH_OFFER_S: z.coerce.number().positive().max(3600).default(30),
  DISPATCH_MAX_OFFERS: positiveInt(5),
  DISPATCH_RETRY_S: z.coerce.number().positive().max(86400).default(60),
  COURIER_CAPACITY: positiveInt(1),
  COURIER_STALE_S: z.coerce.number().positive().max(86400).default(120),
}

export const dispatcherEnv = commonEnv.extend({
  ...queueWorker,
  ...serving,
  ...dispatching,
  DISPATCHER_PORT: port(3005),
  DISPATCHER_OPS_PORT: port(9469),
  DISPATCHER_CONCURRENCY: positiveInt(10),
  // How long a dispatch job may run without renewing its lock before BullMQ hands it to another
  // dispatcher: until then an order whose job died with its process waits (the sweep cannot queue a twin).
  DISPATCHER_LOCK_MS: positiveInt(30000),
  DISPATCHER_STALLED_INTERVAL_MS: positiveInt(30000),
})

/** What the API reference promises receivers (the document's `webhooks`), unless a deployment sets WEBHOOK_TIMEOUT_MS. */
export const WEBHOOK_TIMEOUT_MS_DEFAULT = 10_000

export const webhookSenderEnv = commonEnv.extend({
  ...queueWorker,
  ...serving,
  ...webhookUrls,
  ...webhookSecrets,
  WEBHOOK_SENDER_PORT: port(3003),
  WEBHOOK_SENDER_OPS_PORT: port(9467),
  // Deliveries in flight per process: mostly waiting on a receiver, the database or Redis, so many.
  WEBHOOK_CONCURRENCY: positiveInt(128),
  // Deliveries in flight to any one endpoint, across every sender: a slow receiver keeps to these,
  // an eighth of one process's deliveries (as 4 of 32 were), and a receiver 100 ms away still
  // takes 160 a second.
  WEBHOOK_ENDPOINT_CONCURRENCY: positiveInt(16),
  // A receiver that has not answered by then has failed this attempt.
  WEBHOOK_TIMEOUT_MS: positiveInt(WEBHOOK_TIMEOUT_MS_DEFAULT),
  // Multiplies the retry schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): tests shrink it.
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1000).default(1),
  // How often the relay looks for events not yet turned into deliveries (an index probe of an
  // empty outbox when there are none): what a webhook waits, on average half of it, after its commit.
  WEBHOOK_RELAY_INTERVAL_MS: positiveInt(50),
  // A delivery untouched this long is checked for its job, and re-queued when Redis lost it.
  WEBHOOK_REQUEUE_AFTER_S: positiveInt(30),
  WEBHOOK_LOCK_MS: positiveInt(30000),
  WEBHOOK_STALLED_INTERVAL_MS: positiveInt(30000),
})

export const consoleEnv = commonEnv.extend({
  ...serving,
  ...readReplica,
  ...webhookUrls,
  ...webhookSecrets,
  CONSOLE_PORT: port(3004),
  CONSOLE_OPS_PORT: port(9468),
  // Signs the session cookie; `npm start` makes one per run.
  CONSOLE_SESSION_SECRET: z.string({ error: 'is required (at least 32 characters)' }).min(32, 'must be at least 32 characters'),
  CONSOLE_SESSION_TTL_H: positiveInt(12),
  // Logins and password settings per client address and minute (each costs a scrypt hash); 0 turns it off.
  CONSOLE_LOGIN_LIMIT: z.coerce.number().int().min(0).default(20),
  // The tracking page's map: slippy-map tiles (`https://…/{z}/{x}/{y}.png`) under the courier's
  // marker; unset, their position in words. The tile server sees the courier's area, never the addresses.
  TRACKING_MAP_TILES_URL: z.url({ protocol: /^https?$/, error: 'must be an http or https URL' })
    .refine((url) => ['{z}', '{x}', '{y}'].every((part) => url.includes(part)), 'must contain {z}, {x} and {y}').optional(),
  TRACKING_MAP_ATTRIBUTION: z.string().min(1).default('© OpenStreetMap contributors'),
  // The recipients' clock: the tracking page shows its times there (the API's stay UTC).
  TRACKING_TIME_ZONE: z.string().refine(isTimeZone, 'must be an IANA time zone, such as Africa/Lagos').default('Africa/Lagos'),
  TRUST_PROXY: z.string().default('false').transform(trustProxy),
})

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * `npm start`: migrates and seeds, finds the gateway on its port to say it is ready, gives each
 * replica of a service its own ports (services/launcher/replicas.ts), and hands
 * its children the internal token (its own when set, otherwise a fresh one per run).
 */
export const launcherEnv = commonEnv.extend({
  GATEWAY_PORT: port(GATEWAY_DEFAULT_PORT),
  // Where it asks each child's /healthz, to restart one that is alive but frozen.
  PRICING_PORT: port(3001),
  WORKER_PORT: port(3002),
  WEBHOOK_SENDER_PORT: port(3003),
  CONSOLE_PORT: port(3004),
  DISPATCHER_PORT: port(3005),
  // Each service's own, as it reads them: with --replicas, replica n gets these plus 10·(n−1).
  GATEWAY_OPS_PORT: port(9464),
  PRICING_OPS_PORT: port(9465),
  WORKER_OPS_PORT: port(9466),
  WEBHOOK_SENDER_OPS_PORT: port(9467),
  CONSOLE_OPS_PORT: port(9468),
  DISPATCHER_OPS_PORT: port(9469),
  INTERNAL_TOKEN: internalToken.optional(),
  QUOTE_SIGNING_KEY: hmacKey.optional(),
  WEBHOOK_SECRET_KEYS: z.string().optional(),
})

/** `npm run migrate`: migrates, then keeps the history's month partitions (the owner role's DDL). */
export const migrateEnv = commonEnv.extend(retention)

/** `webhooks:reencrypt`: the key ring, to seal every stored webhook secret under its first key. */
export const webhookKeysEnv = commonEnv.extend(webhookSecrets)

/**
 * `npm run admin -- erase`: the HMAC key that names an erased person in the audit trail. A plain
 * hash of a phone number is undone by trying every number (minutes for a whole country's); one
 * keyed outside the database is not. Keep it: the trail's names are made with it.
 */
export const erasureEnv = commonEnv.extend({ ERASURE_AUDIT_KEY: hmacKey })

export type CommonConfig = z.infer<typeof commonEnv>
export type PricingConfig = z.infer<typeof pricingEnv>
export type GatewayConfig = z.infer<typeof gatewayEnv>
export type WorkerConfig = z.infer<typeof workerEnv>
export type LauncherConfig = z.infer<typeof launcherEnv>
export type WebhookSenderConfig = z.infer<typeof webhookSenderEnv>
export type ConsoleConfig = z.infer<typeof consoleEnv>
export type DispatcherConfig = z.infer<typeof dispatcherEnv>
export type ReadReplicaConfig = z.infer<z.ZodObject<typeof readReplica>>
/** The settings every long-running service has (where it listens, its Postgres session bounds). */
export type ServingConfig = z.infer<z.ZodObject<typeof serving>>

/**
 * Parses the environment once. Empty strings count as unset, so `FOO=` in a compose file
 * falls back to the default instead of failing a number check. Under NODE_ENV=production it
 * also refuses weak secrets and the webhook relaxations (shared/production-config.ts).
 */
export function loadConfig<S extends z.ZodType<Record<string, unknown>>>(schema: S, env: NodeJS.ProcessEnv = process.env): z.infer<S> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''))
  // The console's address follows the port it was moved to unless it is set: the links the
  // launcher, the CLI and the console print then open the console that runs.
  if (cleaned.CONSOLE_PUBLIC_URL === undefined && /^\d{1,5}$/.test(cleaned.CONSOLE_PORT ?? '')) cleaned.CONSOLE_PUBLIC_URL = `http://localhost:${cleaned.CONSOLE_PORT}`
  const parsed = schema.safeParse(cleaned)
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`)
  }
  const refused = productionProblems(parsed.data, cleaned)
  if (refused.length > 0) throw new ConfigError(`Invalid configuration: ${refused.join('; ')}`)
  return parsed.data
}
