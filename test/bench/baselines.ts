import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Queue, QueueEvents, Worker } from 'bullmq'
import createFastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import postgres from 'postgres'
import { Agent, Pool, request } from 'undici'
import { placementJobOptions } from '../../shared/placement-queue.js'

/*
 * The bare stack the project is measured against, with none of the project's own code on the
 * request path: the same libraries, the same pool sizes and worker concurrency as the project's
 * defaults, doing the least that the same answer needs.
 *
 *   (a) quote:     fastify front ──undici Pool, keep-alive──▶ fastify back, a quote-shaped JSON
 *   (b) placement: fastify front: records the pending placement with its shipments (one
 *                  autocommit insert), then ──BullMQ job of ids──▶ worker: one transaction that
 *                  locks the placement and reads its shipments, locks the wallet row, inserts N
 *                  order rows and N event rows (the outbox the project writes with its orders,
 *                  numbered from a counter), writes the debit's ledger entry, debits the wallet and
 *                  stores the outcome on the placement; the result goes back to the HTTP caller
 *                  through QueueEvents. That is the work DESIGN sections 4 and 7 and 13.13 ask of
 *                  any implementation (the pending row before the job, ids in the job, the
 *                  placement locked and settled in the transaction, a ledger entry per movement).
 *                  `/place-bare` is the bare stack (the second column): shipments in the job, no
 *                  placement row, no ledger entry; one transaction of orders, events and the debit.
 *                  `/quote-bare` likewise: front ──▶ back, nothing held and no token checked.
 *   (c) webhooks:  BullMQ job carrying an event's body ──worker──▶ HMAC-SHA256 in the Standard
 *                  Webhooks form, POST with undici to the bench's receiver
 *   (d) location:  fastify that authenticates nothing: one Redis GEOADD of the body's position
 *                  per request, the Authorization header as the member (DESIGN 14's bench case).
 *                  `/location-same` does what DESIGN 6, 14 and 15 ask of any implementation of a
 *                  ping, the least way: the courier found by their token's SHA-256 (held in memory,
 *                  read from Postgres once), the body's numbers checked, one Lua script for the
 *                  one-a-second gate, the last fix, the last-seen score, the GEO set of the
 *                  courier's vehicle while on shift and the 30-second trail window (when it falls
 *                  due, one indexed read of whether the courier holds an order), an x-request-id on
 *                  the answer, a count of pings and a latency histogram.
 *
 * Run as `node dist/test/bench/baselines.js <role>`, one process per role, as the project runs
 * one process per service.
 */

// Baseline (b)'s settings (worker concurrency 16, pool 20) are the project's defaults
// (shared/config.ts), as are PRICING_CONNECTIONS, WORKER_CONCURRENCY,
// WEBHOOK_CONCURRENCY, WEBHOOK_TIMEOUT_MS, and the sender's undici Agent.
const PRICING_CONNECTIONS = 64
const QUOTE_TTL_S = 900
// BENCH_BASELINE_CONCURRENCY tries other settings; 16 is the project's own default.
const WORKER_CONCURRENCY = Number(process.env.BENCH_BASELINE_CONCURRENCY ?? 16)
const WEBHOOK_CONCURRENCY = 128
const WEBHOOK_TIMEOUT_MS = 10_000
const WEBHOOK_CONNECTIONS = 64
const POOL_MAX = WORKER_CONCURRENCY + 4
// The gateway's default pool (shared/config.ts DATABASE_POOL_MAX).
const FRONT_POOL_MAX = 10
const WAIT_TIMEOUT_MS = 30_000
export const BASELINE_QUEUE = 'baseline-place'
export const BASELINE_WEBHOOK_QUEUE = 'baseline-webhooks'

/** The baseline's tables, in a schema of their own in the bench database. */
export async function prepareBaselineSchema(databaseUrl: string, schema: string, balanceMinor: number, wallets: number): Promise<string[]> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} })
  try {
    await sql`drop schema if exists ${sql(schema)} cascade`
    await sql`create schema ${sql(schema)}`
    await sql`create table ${sql(schema)}.wallets (id uuid primary key, balance bigint not null check (balance >= 0), entries bigint not null default 0, updated_at timestamptz not null default now())`
    await sql`create table ${sql(schema)}.orders (
      id text primary key, wallet_id uuid not null references ${sql(schema)}.wallets(id), position integer not null,
      price bigint not null, shipment jsonb not null, created_at timestamptz not null default now())`
    await sql`create table ${sql(schema)}.placements (
      id uuid primary key, wallet_id uuid not null, status text not null, shipments jsonb not null, outcome jsonb,
      created_at timestamptz not null default now(), completed_at timestamptz)`
    await sql`create table ${sql(schema)}.ledger_entries (
      id bigserial primary key, wallet_id uuid not null, kind text not null, amount bigint not null, placement_id uuid,
      balance_after bigint not null, seq bigint not null, created_at timestamptz not null default now())`
    await sql`create table ${sql(schema)}.event_counters (wallet_id uuid primary key, last_sequence bigint not null)`
    await sql`create table ${sql(schema)}.events (
      id text primary key, wallet_id uuid not null, sequence bigint not null, order_id text not null, data jsonb not null,
      created_at timestamptz not null default now(), unique (wallet_id, sequence))`
    // Baseline (d)'s same-work side: a courier found by their token's hash, and whether they hold an order.
    await sql`create table ${sql(schema)}.couriers (token_hash text primary key, id text not null unique, vehicle_type text not null, active_order_id text)`
    const walletIds = Array.from({ length: wallets }, () => randomUUID())
    await sql`insert into ${sql(schema)}.wallets ${sql(walletIds.map((id) => ({ id, balance: balanceMinor })))}`
    return walletIds
  } finally {
    await sql.end()
  }
}

function env(name: string): string {
  const value = process.env[name]
  if (!value) throw new Error(`${name} is not set`)
  return value
}

const QUOTE = {
  price: 3500,
  distance_km: 22.57,
  currency: 'NGN',
  pricing_model: 'rate_card',
  option_id: 'opt_ABCDEFGHJKMN',
  option_label: 'Up to 5 kg',
  delivery_mode: 'MOTORBIKE',
  from_zone_name: 'Island',
  to_zone_name: 'Ikeja',
}

/** A fastify app that answers the bench's readiness probe. */
function bareApp() {
  const app = createFastify({ logger: false })
  app.get('/healthz', async () => ({ status: 'ok' }))
  return app
}

async function quoteBack() {
  const app = bareApp()
  // The internal token check the contract asks of pricing, at its bare cost.
  const authorization = 'Bearer baseline-internal-token'
  // Quotes are held (DESIGN 13.13): one Redis SET with a TTL per quote, auto-pipelined, as the
  // pricing service does, of a record the size of the project's.
  const redis = new Redis(env('REDIS_URL'), { enableAutoPipelining: true, maxRetriesPerRequest: 1 })
  const prefix = env('QUEUE_PREFIX')
  app.post('/internal/quote', async (request, reply) => {
    if (request.headers.authorization !== authorization) return reply.code(401).send({ message: 'Invalid internal token' })
    const body = request.body as { business_id: string; request: { weight: number } }
    const quote = { ...QUOTE, price: QUOTE.price + (body.request.weight > 5 ? 1000 : 0) }
    const id = `qt_${randomBytes(10).toString('hex').slice(0, 16).toUpperCase()}`
    const expiresAt = new Date(Date.now() + QUOTE_TTL_S * 1000).toISOString()
    const held = { id, businessId: body.business_id, livemode: true, request: body.request, quote, expiresAt }
    await redis.set(`${prefix}:quote:${id}`, JSON.stringify(held), 'EX', QUOTE_TTL_S + 3600)
    return { ...quote, quote_id: id, expires_at: expiresAt }
  })
  // The bare stack (the performance issue's second column): a quote-shaped answer, nothing held, nothing checked.
  app.post('/internal/quote-bare', async (request) => {
    const body = request.body as { request: { weight: number } }
    return { ...QUOTE, price: QUOTE.price + (body.request.weight > 5 ? 1000 : 0), quote_id: 'qt_BARE', expires_at: new Date(Date.now() + QUOTE_TTL_S * 1000).toISOString() }
  })
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

async function quoteFront() {
  const app = bareApp()
  const pool = new Pool(env('BACK_URL'), { connections: PRICING_CONNECTIONS, keepAliveTimeout: 30_000 })
  const relay = (path: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const response = await pool.request({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', authorization: 'Bearer baseline-internal-token' },
      body: JSON.stringify({ business_id: 'b', request: request.body }),
    })
    const text = await response.body.text()
    return reply.code(response.statusCode).type('application/json; charset=utf-8').send(text)
  }
  app.post('/quote', relay('/internal/quote'))
  app.post('/quote-bare', relay('/internal/quote-bare'))
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

type Shipments = { weight: number }[]
/** The job: ids only, the shipments on the placement row; the bare stack's job carries the shipments. */
interface BaselineJob { walletId: string; placementId: string; shipments?: Shipments }
interface BaselineResult { orders: { order_id: string; price: number }[]; charged_total: number }

async function placeFront() {
  const app = bareApp()
  const sql = postgres(env('DATABASE_URL'), { max: FRONT_POOL_MAX, onnotice: () => {}, connection: { search_path: env('BASELINE_SCHEMA') } })
  const producer = new Redis(env('REDIS_URL'), { enableOfflineQueue: false, maxRetriesPerRequest: 1 })
  const queue = new Queue<BaselineJob>(BASELINE_QUEUE, { connection: producer, prefix: env('QUEUE_PREFIX') })
  const events = new QueueEvents(BASELINE_QUEUE, { connection: new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null }), prefix: env('QUEUE_PREFIX') })
  await events.waitUntilReady()
  const waiters = new Map<string, (result: BaselineResult | null) => void>()
  events.on('completed', ({ jobId, returnvalue }) => {
    const resolve = waiters.get(jobId)
    if (!resolve) return
    waiters.delete(jobId)
    resolve((typeof returnvalue === 'string' ? JSON.parse(returnvalue) : returnvalue) as BaselineResult)
  })
  const ownWallet = env('WALLET_ID')
  // `/place` does the work the design requires (b); `/place-bare` is the bare stack's.
  const place = (bare: boolean) => async (request: FastifyRequest, reply: FastifyReply) => {
    const shipments = request.body as Shipments
    // The caller names its wallet as the project's caller names its business, by a header.
    const named = request.headers['x-wallet-id']
    const walletId = typeof named === 'string' ? named : ownWallet
    const id = randomUUID()
    const result = new Promise<BaselineResult | null>((resolve) => {
      const timer = setTimeout(() => { waiters.delete(id); resolve(null) }, WAIT_TIMEOUT_MS)
      waiters.set(id, (value) => { clearTimeout(timer); resolve(value) })
    })
    if (bare) await queue.add('place', { walletId, placementId: id, shipments }, { ...placementJobOptions, jobId: id })
    else {
      await sql`insert into placements (id, wallet_id, status, shipments) values (${id}, ${walletId}, 'pending', ${JSON.stringify(shipments)}::text::jsonb)`
      await queue.add('place', { walletId, placementId: id }, { ...placementJobOptions, jobId: id })
    }
    const outcome = await result
    if (!outcome) return reply.code(503).send({ message: 'timed out' })
    return reply.code(201).send({ status: 'Success', ...outcome, placement_id: id })
  }
  app.post('/place', place(false))
  app.post('/place-bare', place(true))
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

async function placeWorker() {
  const schema = env('BASELINE_SCHEMA')
  const sql = postgres(env('DATABASE_URL'), { max: POOL_MAX, onnotice: () => {}, connection: { search_path: schema } })
  const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null })
  const worker = new Worker<BaselineJob, BaselineResult>(BASELINE_QUEUE, async (job) => {
    const { walletId, placementId } = job.data
    return sql.begin(async (tx) => {
      let shipments = job.data.shipments
      if (!shipments) {
        const [placement] = await tx<{ shipments: Shipments }[]>`select shipments from placements where id = ${placementId} and status = 'pending' for update`
        if (!placement) throw new Error('placement is not pending')
        shipments = placement.shipments
      }
      const [wallet] = await tx`select balance, entries from wallets where id = ${walletId} for update`
      const rows = shipments.map((shipment, position) => ({
        id: `ORD-${randomBytes(8).toString('hex')}`,
        wallet_id: walletId,
        position,
        price: 350000,
        shipment: shipment as never,
      }))
      const total = rows.reduce((sum, row) => sum + row.price, 0)
      if (Number(wallet.balance) < total) throw new Error('insufficient balance')
      await tx`insert into orders ${tx(rows)}`
      const [counter] = await tx`
        insert into event_counters (wallet_id, last_sequence) values (${walletId}, ${rows.length})
        on conflict (wallet_id) do update set last_sequence = event_counters.last_sequence + excluded.last_sequence
        returning last_sequence`
      const first = Number(counter.last_sequence) - rows.length + 1
      await tx`insert into events ${tx(rows.map((row, index) => ({ id: `evt_${randomBytes(10).toString('hex')}`, wallet_id: walletId, sequence: first + index, order_id: row.id, data: { order: row } as never })))}`
      const result = { orders: rows.map((row) => ({ order_id: row.id, price: row.price / 100 })), charged_total: total / 100 }
      if (job.data.shipments) {
        await tx`update wallets set balance = balance - ${total}, updated_at = now() where id = ${walletId}`
        return result
      }
      await Promise.all([
        tx`insert into ledger_entries (wallet_id, kind, amount, placement_id, balance_after, seq)
          values (${walletId}, 'debit', ${total}, ${placementId}, ${Number(wallet.balance) - total}, ${Number(wallet.entries) + 1})`,
        tx`update wallets set balance = balance - ${total}, entries = entries + 1, updated_at = now() where id = ${walletId}`,
        tx`update placements set status = 'succeeded', outcome = ${JSON.stringify(result)}::text::jsonb, completed_at = now() where id = ${placementId}`,
      ])
      return result
    }) as Promise<BaselineResult>
  }, { connection, prefix: env('QUEUE_PREFIX'), concurrency: WORKER_CONCURRENCY })
  await worker.waitUntilReady()
  const app = bareApp()
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

/** A webhook job: the event's id and its body, byte for byte what is signed and sent. */
export interface BaselineWebhookJob { id: string; body: string }

async function webhookWorker() {
  const url = new URL(env('WEBHOOK_URL'))
  // The key is the base64 part of the `whsec_` secret, as Standard Webhooks defines it.
  const key = Buffer.from(env('WEBHOOK_SECRET').replace(/^whsec_/, ''), 'base64')
  const dispatcher = new Agent({ connections: WEBHOOK_CONNECTIONS, keepAliveTimeout: 10_000 })
  const connection = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null })
  const worker = new Worker<BaselineWebhookJob>(BASELINE_WEBHOOK_QUEUE, async (job) => {
    const { id, body } = job.data
    const timestamp = String(Math.floor(Date.now() / 1000))
    const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
    const response = await request(url, {
      method: 'POST',
      body,
      headers: { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}`, 'content-type': 'application/json', 'user-agent': 'baseline-webhooks/1' },
      dispatcher,
      headersTimeout: WEBHOOK_TIMEOUT_MS,
      bodyTimeout: WEBHOOK_TIMEOUT_MS,
    })
    await response.body.dump()
    // Thrown so BullMQ keeps the job as failed, which the bench counts.
    if (response.statusCode < 200 || response.statusCode >= 300) throw new Error(`the receiver answered ${response.statusCode}`)
  }, { connection, prefix: env('QUEUE_PREFIX'), concurrency: WEBHOOK_CONCURRENCY })
  await worker.waitUntilReady()
  const app = bareApp()
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

/** How baseline (d)'s same-work side keys a courier: their token's SHA-256, as the bench seeds it. */
export function courierTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** A courier's location ping at its barest: no token check, no rate gate, no last fix, one GEOADD. */
async function location() {
  const app = bareApp()
  // The gateway's Redis options (services/gateway/app.ts), auto-pipelining included, as there.
  const redis = new Redis(env('REDIS_URL'), { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true })
  await new Promise((resolve) => redis.once('ready', resolve))
  const prefix = env('QUEUE_PREFIX')
  const key = `${prefix}:couriers:available`
  app.post('/location', async (request, reply) => {
    const body = request.body as { latitude: number; longitude: number }
    await redis.geoadd(key, body.longitude, body.latitude, request.headers.authorization ?? 'anonymous')
    return reply.code(204).send()
  })

  // The same work as the project's ping (the header comment says what), and no more.
  const sql = postgres(env('DATABASE_URL'), { max: 4, onnotice: () => {}, connection: { search_path: env('BASELINE_SCHEMA') } })
  const couriers = new LRUCache<string, { id: string; vehicleType: string }>({ max: 50_000, ttl: 300_000 })
  const ping = `
if not redis.call('SET', KEYS[1], '1', 'PX', 1000, 'NX') then return -1 end
local kept = redis.call('ZSCORE', KEYS[3], ARGV[3])
if kept and tonumber(kept) > tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[2], ARGV[1], 'EX', 86400)
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[3])
if redis.call('GET', KEYS[4]) == 'available' then redis.call('GEOADD', KEYS[5], ARGV[4], ARGV[5], ARGV[3]) end
if redis.call('SET', KEYS[6], '1', 'EX', 30, 'NX') then return 1 end
return 0`
  // Loaded once and run by its SHA-1, as the project runs its scripts (Redis is not restarted mid-run).
  const pingSha = String(await redis.script('LOAD', ping))
  const pings = { count: 0, buckets: [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000].map((le) => ({ le, count: 0 })) }
  // In a context of its own: the bare route above keeps fastify's defaults and no hook.
  await app.register(async (same) => {
    same.addHook('onResponse', (_request, reply, done) => {
      const ms = reply.elapsedTime
      for (const bucket of pings.buckets) if (ms <= bucket.le) bucket.count++
      done()
    })
    const answer = (reply: FastifyReply, status: number, body?: { status: number; message: string }) => reply.code(status).header('x-request-id', randomUUID()).send(body)
    same.post('/location-same', async (request, reply) => {
      const header = request.headers.authorization
      const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : ''
      const hash = courierTokenHash(token)
      let courier = couriers.get(hash)
      if (!courier) {
        const [row] = await sql<{ id: string; vehicle_type: string }[]>`select id, vehicle_type from couriers where token_hash = ${hash}`
        if (!row) return answer(reply, 401, { status: 401, message: 'Invalid courier token' })
        couriers.set(hash, (courier = { id: row.id, vehicleType: row.vehicle_type }))
      }
      const { latitude, longitude } = request.body as { latitude?: unknown; longitude?: unknown }
      if (typeof latitude !== 'number' || typeof longitude !== 'number' || Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
        return answer(reply, 400, { status: 400, message: 'latitude and longitude are required numbers' })
      }
      const now = Date.now()
      const id = courier.id
      const outcome = Number(await redis.evalsha(pingSha, 6,
        `${prefix}:courier:${id}:ping`, `${prefix}:courier:${id}:fix`, `${prefix}:couriers:seen`, `${prefix}:courier:${id}:shift`, `${key}:${courier.vehicleType}`, `${prefix}:courier:${id}:trail`,
        `{"latitude":${latitude},"longitude":${longitude},"at":${now}}`, now, id, longitude, latitude))
      if (outcome === -1) return answer(reply.header('retry-after', '1'), 429, { status: 429, message: 'Too many location updates' })
      if (outcome === 1) {
        const [held] = await sql<{ active_order_id: string | null }[]>`select active_order_id from couriers where id = ${id}`
        if (!held?.active_order_id) await redis.expire(`${prefix}:courier:${id}:trail`, 300)
      }
      pings.count++
      return answer(reply, 204)
    })
  })
  await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' })
}

const roles: Record<string, () => Promise<void>> = {
  'quote-back': quoteBack,
  'quote-front': quoteFront,
  'place-front': placeFront,
  'place-worker': placeWorker,
  'webhook-worker': webhookWorker,
  location,
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const role = roles[process.argv[2] ?? '']
  if (!role) {
    console.error(`usage: baselines.js ${Object.keys(roles).join('|')}`)
    process.exit(2)
  }
  process.once('SIGTERM', () => process.exit(0))
  await role()
}
