import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { Pool, type Dispatcher } from 'undici'
import type { CommonConfig } from '../../shared/config.js'
import { createCourier } from '../../shared/couriers/accounts.js'
import { DISPATCH_QUEUE } from '../../shared/dispatch/queue.js'
import { createRedis } from '../../shared/redis.js'
import type { Sql } from '../../shared/db/sql.js'
import { shipment } from '../helpers/shipments.js'
import { cpuShares, drive, readCpu, RoundRobin, type Run } from './load.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { courierTokenHash } from './baselines.js'

/*
 * The courier cases (DESIGN 14, "Metrics and limits").
 *
 * courier-location: `POST /v2/courier/location` through the gateway, every request carrying the
 * next of many couriers' tokens, so no courier pings twice within a second and the per-courier
 * limit (one a second, 429 beyond) is never what is measured; against baseline (d) (baselines.ts,
 * role `location`): bare, a fastify that authenticates nothing and does one GEOADD per request;
 * same-work, the contract's ping done the least way. The couriers are on shift far from every
 * dispatch pickup (Kano), so the project moves them in its GEO set as the baseline does, and
 * dispatch never finds them.
 *
 * dispatch: couriers on shift near the pickups, each on its own `GET /v2/courier/stream`; orders
 * placed through the gateway at a steady rate with the worker and the dispatcher running; each
 * `offer` read on a stream is timed against the order's `created_at` (the worker's clock, this
 * machine's), then accepted, picked up and delivered, so the courier is free for the next one.
 * No baseline: the target is absolute (p99 ≤ 1 s).
 */

// Far from Lagos: the location case's couriers are on shift there, out of every pickup's radius.
const KANO = { latitude: 12.0, longitude: 8.52 }
// Inside the demo card's Island zone (3.37–3.45 E, 6.41–6.47 N): pickups and couriers, spread.
const AREA = { lat: [6.42, 6.46], lng: [3.38, 3.44] }
// A courier's ping while on shift, as the simulator's (DESIGN 14: one every 5 s).
const PING_EVERY_MS = 5000

function log(line: string) {
  process.stderr.write(`${line}\n`)
}

/** Runs `task` over `items` with at most `limit` at once. */
async function inTurn<T, R>(items: T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index]!, index)
    }
  }))
  return results
}

export interface BenchCourier { id: string; token: string }

let benchPhones = 0
/** A phone of its own (one enabled courier per phone), away from the demo rider's and the simulator's (+234800…). */
const benchPhone = () => `+23481${String(++benchPhones).padStart(8, '0')}`

/** Couriers as the operator creates them (`courier:create`: the repository it calls), bikes all. */
export async function seedCouriers(sql: Sql, count: number, label: string): Promise<BenchCourier[]> {
  const started = performance.now()
  const couriers = await inTurn(Array.from({ length: count }, (_, index) => index), 8, async (index) => {
    const created = await createCourier(sql, 'bench', {
      name: `${label} ${index + 1}`, phone: benchPhone(), vehicleType: 'bike', vehiclePlate: null, maxWeightKg: null,
    })
    if (created.kind !== 'created') throw new Error(`bench courier ${label} ${index + 1}: ${created.message}`)
    return { id: created.courier.id, token: created.token }
  })
  log(`  ${label}: ${count} couriers created in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return couriers
}

/** A courier's call to the gateway; its status, and its body when it is JSON. */
async function call(pool: Pool, token: string, method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await pool.request({
    method, path,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await response.body.text()
  return { status: response.statusCode, json: text && response.headers['content-type']?.toString().includes('json') ? JSON.parse(text) : null }
}

async function expectOk(what: string, answer: Promise<{ status: number; json: unknown }>): Promise<unknown> {
  const { status, json } = await answer
  if (status < 200 || status >= 300) throw new Error(`${what}: ${status} ${JSON.stringify(json)}`)
  return json
}

function within(range: number[]): number {
  return range[0]! + Math.random() * (range[1]! - range[0]!)
}

/** Where baseline (d)'s same-work side finds its couriers: its schema's table and its Redis prefix. */
export interface LocationBaselineStore { sql: Sql; schema: string; redisUrl: string; prefix: string }

/**
 * The location case: every side driven by autocannon, each request with the next courier's token
 * (the bare side's token is only the GEO member). The same-work side knows the project's couriers
 * by their tokens' hashes and has them on shift in its own prefix, as the project has them.
 */
export async function locationCase(options: {
  sql: Sql; gatewayUrl: string; baselineUrl: string; couriers: number; connections: number; store: LocationBaselineStore
  processes: { project: Record<string, number>; baseline: Record<string, number> }; watchPid: number
}) {
  const couriers = await seedCouriers(options.sql, options.couriers, 'Location courier')
  await shareWithBaseline(couriers, options.store)
  // On shift through the API, as a courier goes on shift; the first fix puts them in the GEO set.
  const pool = new Pool(options.gatewayUrl, { connections: 32 })
  const baselinePool = new Pool(options.baselineUrl, { connections: 32 })
  try {
    await inTurn(couriers, 32, (courier) => expectOk('shift', call(pool, courier.token, 'POST', '/v2/courier/shift', { status: 'available' })))
    // Each courier's first fix joins the dispatch set and starts a trail window (one trail write
    // per courier per TRAIL_EVERY_S): done here on both sides, so the rounds measure the steady ping.
    await inTurn(couriers, 32, (courier) => expectOk('first fix', call(pool, courier.token, 'POST', '/v2/courier/location', KANO)))
    await inTurn(couriers, 32, (courier) => expectOk('same-work first fix', call(baselinePool, courier.token, 'POST', '/location-same', KANO)))
  } finally {
    await Promise.all([pool.close(), baselinePool.close()])
  }
  const body = JSON.stringify({ latitude: KANO.latitude, longitude: KANO.longitude })
  const tokens = couriers.map((courier) => ({ authorization: `Bearer ${courier.token}` }))
  // Each side goes round its couriers from where its last run stopped, whichever side ran between.
  const [sameTurns, bareTurns, projectTurns] = [new RoundRobin(tokens), new RoundRobin(tokens), new RoundRobin(tokens)]
  const common = { connections: options.connections, unitsPerRequest: 1 }
  return {
    baseline: (seconds: number) => drive({ url: `${options.baselineUrl}/location-same`, headers: {}, body, rotate: sameTurns }, { ...common, seconds, processes: options.processes.baseline }),
    bare: (seconds: number) => drive({ url: `${options.baselineUrl}/location`, headers: {}, body, rotate: bareTurns }, { ...common, seconds, processes: options.processes.baseline }),
    project: (seconds: number) => drive({ url: `${options.gatewayUrl}/v2/courier/location`, headers: {}, body, rotate: projectTurns }, { ...common, seconds, watchPid: options.watchPid, processes: options.processes.project }),
  }
}

/** The couriers as baseline (d)'s same-work side knows them: by their token's hash, bikes, on shift. */
async function shareWithBaseline(couriers: BenchCourier[], store: LocationBaselineStore): Promise<void> {
  const rows = couriers.map((courier) => ({ token_hash: courierTokenHash(courier.token), id: courier.id, vehicle_type: 'bike' }))
  for (let at = 0; at < rows.length; at += 1000) await store.sql`insert into ${store.sql(store.schema)}.couriers ${store.sql(rows.slice(at, at + 1000))}`
  const redis = new Redis(store.redisUrl, { maxRetriesPerRequest: 1 })
  try {
    const batch = redis.pipeline()
    for (const courier of couriers) batch.set(`${store.prefix}:courier:${courier.id}:shift`, 'available')
    await batch.exec()
  } finally {
    redis.disconnect()
  }
}

/**
 * Waits, up to two minutes, until the dispatcher just started has worked through the jobs queued
 * before it: the location case's couriers each queued a wake on their first fix, and tens of
 * thousands of those (run after every order's offer, by their priority) would otherwise share the
 * machine with the measured rounds.
 */
export async function drainDispatchQueue(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX'>): Promise<void> {
  const connection = createRedis(config, { maxRetriesPerRequest: null })
  const queue = new Queue(DISPATCH_QUEUE, { connection, prefix: config.QUEUE_PREFIX })
  const started = performance.now()
  const left = async () => {
    const counts = await queue.getJobCounts('wait', 'prioritized', 'active')
    return (counts.wait ?? 0) + (counts.prioritized ?? 0) + (counts.active ?? 0)
  }
  try {
    const first = await left()
    let now = first
    while (now > 0 && performance.now() - started < 120_000) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      now = await left()
    }
    log(`  dispatch: ${first} jobs queued before the dispatcher started, worked through in ${((performance.now() - started) / 1000).toFixed(1)} s${now > 0 ? `; ${now} left at the deadline` : ''}`)
  } finally {
    await queue.close()
    connection.disconnect()
  }
}

/** What one dispatch run saw, beyond a Run's fields. */
export type DispatchFigures = {
  placed: number
  offered: number
  /** Orders with no offer on a stream by the deadline; counted in the percentiles at the time given up. */
  missed: number
  /** Placement request sent → offer on the stream. */
  fromRequestP50Ms: number
  fromRequestP99Ms: number
  /** Order created_at → offer on the stream, of the orders offered by the deadline only. */
  offeredP50Ms: number
  offeredP99Ms: number
  /** Order created_at → offer on the stream, the slowest (or given up). */
  maxMs: number
  deliveries: number
  /** A courier's turnaround: offer read → accept, pickup and deliver answered (free again). */
  turnaroundP50Ms: number
  turnaroundP99Ms: number
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/**
 * The dispatch case. `start` runs the dispatcher (the bench starts it for this case only: the
 * throughput cases leave live orders behind by the hundred thousand, each with a waiting
 * dispatch job, and the dispatcher would work through those first).
 */
export async function dispatchCase(options: {
  sql: Sql; gatewayUrl: string; apiKeys: string[]; couriers: number; rate: number; deadlineMs: number
  processes: Record<string, number>
}) {
  const couriers = await seedCouriers(options.sql, options.couriers, 'Dispatch courier')
  const calls = new Pool(options.gatewayUrl, { connections: 64 })
  const placements = new Pool(options.gatewayUrl, { connections: 64 })
  const streams = new Pool(options.gatewayUrl, { connections: couriers.length + 1, bodyTimeout: 0, headersTimeout: 30_000 })
  const spots = new Map(couriers.map((courier) => [courier.id, { latitude: within(AREA.lat), longitude: within(AREA.lng) }]))
  const ping = (courier: BenchCourier) => call(calls, courier.token, 'POST', '/v2/courier/location', spots.get(courier.id))

  // When each order's first offer was read on a stream: often before its placement is answered.
  const offeredAt = new Map<string, number>()
  let failures = 0
  let deliveries = 0
  let turnarounds: number[] = []
  let busy = 0
  const failed = (what: string, status: number, json: unknown) => {
    failures++
    if (failures <= 5) log(`  dispatch: ${what} answered ${status} ${JSON.stringify(json)}`)
  }

  /** A courier's offer: accepted, picked up and delivered at once, so the courier is free again. */
  async function take(courier: BenchCourier, offer: { offer_id: string; order_id: string }) {
    const started = performance.now()
    busy++
    try {
      const steps: [string, string][] = [
        ['accept', `/v2/courier/offers/${offer.offer_id}/accept`],
        ['pickup', `/v2/courier/orders/${offer.order_id}/pickup`],
        ['deliver', `/v2/courier/orders/${offer.order_id}/deliver`],
      ]
      for (const [what, path] of steps) {
        const answer = await call(calls, courier.token, 'POST', path, what === 'pickup' ? undefined : {})
        if (answer.status !== 200) return failed(what, answer.status, answer.json)
      }
      deliveries++
      turnarounds.push(performance.now() - started)
    } catch (err) {
      failed('courier call', 0, errorMessage(err))
    } finally {
      busy--
    }
  }

  /** Reads a courier's Server-Sent Events for as long as the case lasts. */
  async function listen(courier: BenchCourier): Promise<{ close: () => void }> {
    const response = await streams.request({ method: 'GET', path: '/v2/courier/stream', headers: { authorization: `Bearer ${courier.token}`, accept: 'text/event-stream' } })
    if (response.statusCode !== 200) throw new Error(`stream: ${response.statusCode} ${await response.body.text()}`)
    const body = response.body
    body.setEncoding('utf8')
    let buffer = ''
    body.on('data', (chunk: string) => {
      const now = performance.now()
      buffer += chunk
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = /^event: (.*)$/m.exec(block)?.[1]
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (event !== 'offer' || !data) continue
        const offer = JSON.parse(data) as { offer_id: string; order_id: string }
        if (!offeredAt.has(offer.order_id)) offeredAt.set(offer.order_id, now)
        // Any offer, of this run or an earlier one, is taken: a courier holding one gets no other.
        void take(courier, offer)
      }
    })
    body.on('error', () => {})
    return { close: () => body.destroy() }
  }

  // On shift with a first fix, then listening; a ping every 5 s each from then on.
  await inTurn(couriers, 32, async (courier) => {
    await expectOk('shift', call(calls, courier.token, 'POST', '/v2/courier/shift', { status: 'available' }))
    await expectOk('location', ping(courier))
  })
  const listeners = await inTurn(couriers, 32, listen)
  let nextPing = 0
  let pinger: NodeJS.Timeout | undefined
  // After a second, so no courier pings twice within one (429).
  const firstPing = setTimeout(() => {
    pinger = setInterval(() => {
      const courier = couriers[nextPing++ % couriers.length]!
      ping(courier).then(({ status, json }) => { if (status !== 204) failed('location', status, json) }, () => failures++)
    }, PING_EVERY_MS / couriers.length)
  }, 1100)

  // The businesses take turns: one business's orders and their moves queue on its event counter.
  const auths = options.apiKeys.map((apiKey) => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }))
  let nextBusiness = 0
  async function place(sentAt: Map<string, number>, statusCodes: Record<string, number>): Promise<void> {
    const started = performance.now()
    const body = JSON.stringify([shipment({ pickup_latitude: within(AREA.lat), pickup_longitude: within(AREA.lng) })])
    try {
      const response = await placements.request({ method: 'POST', path: '/v2/business/order', headers: auths[nextBusiness++ % auths.length], body })
      const answer = await response.body.json() as { orders?: { order_id: string }[] }
      statusCodes[response.statusCode] = (statusCodes[response.statusCode] ?? 0) + 1
      if (response.statusCode !== 201) return failed('placement', response.statusCode, answer)
      for (const order of answer.orders ?? []) sentAt.set(order.order_id, started)
    } catch (err) {
      failed('placement', 0, errorMessage(err))
    }
  }

  async function run(seconds: number): Promise<Run> {
    const sentAt = new Map<string, number>()
    offeredAt.clear()
    const failuresBefore = failures
    const deliveriesBefore = deliveries
    turnarounds = []
    const statusCodes: Record<string, number> = {}
    const cpuBefore = readCpu(options.processes)
    const started = performance.now()
    // Open loop: placements go out on schedule whatever the answers take.
    const total = Math.round(options.rate * seconds)
    const inFlight: Promise<void>[] = []
    let lastSent = started
    for (let index = 0; index < total; index++) {
      const due = started + (index * 1000) / options.rate
      const wait = due - performance.now()
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
      lastSent = performance.now()
      inFlight.push(place(sentAt, statusCodes))
    }
    // The rate the placements went out at (a late timer shows here), and the cores used until all were answered.
    const placingSeconds = (lastSent - started) / 1000 + 1 / options.rate
    await Promise.all(inFlight)
    const cpu = cpuShares(cpuBefore, readCpu(options.processes), (performance.now() - started) / 1000)
    // Every order placed should be offered; those that are not by the deadline count as missed.
    const deadline = performance.now() + options.deadlineMs
    const unoffered = () => [...sentAt.keys()].filter((orderId) => !offeredAt.has(orderId)).length
    while (performance.now() < deadline && (unoffered() > 0 || busy > 0)) await new Promise((resolve) => setTimeout(resolve, 50))
    const gaveUp = performance.now()

    // created_at is the worker's clock as a Date; performance.now() maps onto the same wall clock.
    const origin = Date.now() - performance.now()
    const ids = [...sentAt.keys()]
    const created = new Map<string, number>()
    for (let i = 0; i < ids.length; i += 5000) {
      const rows = await options.sql<{ id: string; ms: number }[]>`select id, (extract(epoch from created_at) * 1000)::float8 as ms from orders where id = any(${ids.slice(i, i + 5000)})`
      for (const row of rows) created.set(row.id, row.ms)
    }
    const fromCreated: number[] = []
    const fromRequest: number[] = []
    const offeredOnly: number[] = []
    for (const [orderId, sent] of sentAt) {
      const offered = offeredAt.get(orderId) ?? gaveUp
      const latency = origin + offered - (created.get(orderId) ?? origin + sent)
      fromCreated.push(latency)
      if (offeredAt.has(orderId)) offeredOnly.push(latency)
      fromRequest.push(offered - sent)
    }
    for (const list of [fromCreated, fromRequest, offeredOnly, turnarounds]) list.sort((a, b) => a - b)
    const missed = unoffered()
    const placed = sentAt.size
    const figures: DispatchFigures = {
      placed, offered: placed - missed, missed,
      fromRequestP50Ms: Math.round(percentile(fromRequest, 50)), fromRequestP99Ms: Math.round(percentile(fromRequest, 99)),
      offeredP50Ms: Math.round(percentile(offeredOnly, 50)), offeredP99Ms: Math.round(percentile(offeredOnly, 99)),
      maxMs: Math.round(fromCreated.at(-1) ?? NaN), deliveries: deliveries - deliveriesBefore,
      turnaroundP50Ms: Math.round(percentile(turnarounds, 50)), turnaroundP99Ms: Math.round(percentile(turnarounds, 99)),
    }
    return {
      requestsPerSecond: placed / placingSeconds,
      unitsPerSecond: placed / placingSeconds,
      p50Ms: Math.round(percentile(fromCreated, 50)),
      p99Ms: Math.round(percentile(fromCreated, 99)),
      requests: total,
      non2xx: failures - failuresBefore,
      errors: missed,
      timeouts: 0,
      statusCodes,
      cpu,
      dispatch: figures,
    }
  }

  return {
    run,
    async close() {
      clearTimeout(firstPing)
      clearInterval(pinger)
      for (const listener of listeners) listener.close()
      // Off shift, so no later case's orders find them.
      await inTurn(couriers, 32, (courier) => call(calls, courier.token, 'POST', '/v2/courier/shift', { status: 'offline' })).catch(() => {})
      await Promise.all([calls.close(), placements.close(), streams.destroy()])
    },
  }
}
