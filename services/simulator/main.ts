import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { z } from 'zod'
import { demoRateCardPath } from '../../shared/accounts/demo-seed.js'
import { commonEnv, ConfigError, loadConfig } from '../../shared/config.js'
import type { CourierVehicleType, Point } from '../../shared/courier.js'
import { simulatedCourier } from '../../shared/couriers/fixed-couriers.js'
import { findOrderById } from '../../shared/db/orders.js'
import { errorMessage } from '../../shared/errors/error-message.js'
import { createSql, databaseWhere } from '../../shared/db/sql.js'
import { rateCardFileSchema } from '../../shared/schemas/rate-card.js'
import { courierClient, failureOf, unreachable } from './courier-client.js'
import { startRider } from './rider.js'

/*
 * `npm run simulate -- --couriers 20` (DESIGN 14): that many riders around the demo zones, each
 * driven through the public courier API only. The riders themselves are made (or found again)
 * in the database by fixed ids, as an operator's `courier:create` would, with fresh tokens; the
 * recipients read their PIN off the public tracking page.
 */

const flagsSchema = z.object({
  couriers: z.coerce.number().int().min(1).max(500).default(20),
  speed: z.coerce.number().positive().max(10_000).default(10),
  'tick-ms': z.coerce.number().int().min(1000).max(60_000).default(5000),
  accept: z.coerce.number().min(0).max(1).default(0.9),
  seed: z.coerce.number().int().default(1),
  api: z.url().optional(),
  quiet: z.boolean().default(false),
})

/** A flag the simulator cannot run with: one line on stderr, exit 1 (as the operator CLI does). */
function refuse(message: string): never {
  console.error(`simulate: ${message}`)
  process.exit(1)
}

const values = (() => {
  try {
    return parseArgs({
      options: {
        couriers: { type: 'string' }, speed: { type: 'string' }, 'tick-ms': { type: 'string' }, accept: { type: 'string' },
        seed: { type: 'string' }, api: { type: 'string' }, quiet: { type: 'boolean' },
      },
    }).values
  } catch (err) {
    // parseArgs explains an unknown flag or a missing value over several lines, with a stack.
    return refuse(errorMessage(err).replace(/\s*\n\s*/g, ' '))
  }
})()
const parsed = flagsSchema.safeParse(values)
if (!parsed.success) refuse(parsed.error.issues.map((issue) => `--${issue.path.join('.')}: ${issue.message}`).join('; '))
const flags = parsed.data
let config
try {
  config = loadConfig(commonEnv)
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err)
  process.exit(1)
}
const api = flags.api ?? `http://127.0.0.1:${process.env.GATEWAY_PORT || 3000}/v2`

// A small seeded generator (mulberry32): the same --seed puts the riders in the same places.
let state = flags.seed >>> 0
const random = () => {
  state = (state + 0x6d2b79f5) >>> 0
  let x = Math.imul(state ^ (state >>> 15), 1 | state)
  x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
  return ((x ^ (x >>> 14)) >>> 0) / 4294967296
}

/** Somewhere inside the bounding box of one of the demo card's zones. */
const { zones } = rateCardFileSchema.parse(JSON.parse(readFileSync(demoRateCardPath, 'utf8')))
function startPoint(): Point {
  const ring = zones[Math.floor(random() * zones.length)]!.polygon
  const lngs = ring.map(([lng]) => lng)
  const lats = ring.map(([, lat]) => lat)
  const between = (values: number[]) => Math.min(...values) + random() * (Math.max(...values) - Math.min(...values))
  return { lat: between(lats), lng: between(lngs) }
}
/** Mostly bikes; every tenth a truck and every tenth a van, so each of the card's vehicles has riders. */
const vehicleOf = (index: number): CourierVehicleType => (index % 10 === 0 ? 'truck' : index % 10 === 9 ? 'bus_van' : 'bike')

// Before any token is issued: a wrong --api should cost the Sim Riders nothing.
const notThere = await unreachable(api)
if (notThere) refuse(`the API at ${api} ${notThere}`)

const sql = createSql(config, { max: 2 })
const tokens = []
try {
  for (let index = 1; index <= flags.couriers; index++) {
    const made = await simulatedCourier(sql, index, vehicleOf(index))
    if (made) tokens.push({ index, ...made })
    else console.error(`simulate: Sim Rider ${index} is disabled, or its phone is another courier's; left out`)
  }
} catch (err) {
  // The riders are made in the gateway's database (DATABASE_URL): unreachable, or not migrated by `npm start` yet.
  refuse(`cannot make the Sim Riders in the database at ${databaseWhere(config.DATABASE_URL)}: ${errorMessage(err)}; is DATABASE_URL the gateway's, and has npm start migrated it?`)
}
if (tokens.length === 0) refuse('no Sim Rider can ride: every one asked for is disabled or its phone is taken')

/**
 * The recipient's side: the business sent them the order's tracking link, and at the door they
 * read the PIN off that page, as a person would. The link is the one thing taken from the database.
 */
async function pinOf(orderId: string): Promise<string | null> {
  const order = await findOrderById(sql, orderId)
  if (!order?.trackingUrl || !order.deliveryPin) return null
  const page = await fetch(order.trackingUrl)
  return /<p class="pin">(\d{4})<\/p>/.exec(await page.text())?.[1] ?? null
}

const started = Date.now()
// What an operator wants to hear at the end: how many orders the riders finished, and how many they could not.
const counts = { delivered: 0, failed: 0, returned: 0 }
const log = flags.quiet ? () => undefined : (line: string) => console.log(`simulate: ${line}`)
const riders = tokens.map(({ index, courier_token }) => startRider(courierClient(api, courier_token), {
  name: `Sim Rider ${String(index).padStart(3, '0')}`, vehicle: vehicleOf(index), start: startPoint(), speed: flags.speed,
  tickMs: flags['tick-ms'], acceptRate: flags.accept, random, log, warn: (line) => console.error(`simulate: ${line}`), onDelivered: () => void counts.delivered++, onFailed: () => void counts.failed++, onReturned: () => void counts.returned++, pinOf,
}))
try {
  await Promise.all(riders.map((rider) => rider.ready))
} catch (err) {
  // Reached a moment ago, gone now (a restart): one line, as for a wrong --api.
  refuse(`the API at ${api} could not be reached (${failureOf(err)})`)
}
console.log(`simulate: ${riders.length} riders available around the demo zones against ${api} (speed ×${flags.speed}, a ping every ${flags['tick-ms']} ms); Ctrl-C to stop`)

// Bounded, whatever the API or the database are doing: in-flight calls are abandoned, the
// off-shift calls get two seconds, a query in flight one, so either signal stops the run in a few
// seconds. The signal comes twice under `npm run` with Ctrl-C (the terminal's and npm's forward);
// the second must not cut the first stop short.
let stopping = false
async function stop() {
  if (stopping) return
  stopping = true
  const ends = await Promise.all(riders.map((rider) => rider.stop(2000)))
  await sql.end({ timeout: 1 })
  const unconfirmed = ends.filter((end) => end === 'unconfirmed').length
  const shift = unconfirmed === 0 ? 'riders offline' : `${unconfirmed} of ${riders.length} riders not confirmed offline (the API did not answer; they leave dispatch when their last ping goes stale)`
  console.log(`simulate: stopped after ${Math.round((Date.now() - started) / 1000)} s; ${counts.delivered} orders delivered, ${counts.failed} failed, ${counts.returned} returned; ${shift}`)
  process.exit(0)
}
process.on('SIGINT', () => void stop())
process.on('SIGTERM', () => void stop())
