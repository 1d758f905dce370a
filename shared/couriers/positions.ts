import { COURIER_VEHICLE_TYPES, type CourierFix, type CourierShift, type CourierVehicleType, type Point } from '../courier.js'
import { luaScript } from '../lua-script.js'
import type { RedisClient } from '../redis.js'

// Where couriers are, in Redis only (DESIGN 14): a location ping is a few Redis commands, never a
// Postgres write. Every key carries the deployment's prefix (its hash tag), so a Redis Cluster
// keeps them in one slot with the queues.

const FIX_TTL_S = 24 * 3600

/** A courier as the map files them: each vehicle has its own dispatch set. */
export interface CourierOnMap {
  id: string
  vehicleType: CourierVehicleType
}

function keysOf(prefix: string) {
  const set = (vehicle: CourierVehicleType) => `${prefix}:couriers:available:${vehicle}`
  // Named once per prefix like the shared keys below, so a ping builds no set's name.
  const sets = { bike: set('bike'), car: set('car'), bus_van: set('bus_van'), truck: set('truck') } satisfies Record<CourierVehicleType, string>
  return {
    /**
     * A GEO set per vehicle of the couriers on shift (DESIGN 14: "a GEO set per mode"): dispatch
     * searches the sets of the vehicles that may take an order around its pickup, so a truck order
     * in a street full of bikes looks only at trucks.
     */
    available: (vehicle: CourierVehicleType): string => sets[vehicle],
    /** Every dispatch set, for what takes a courier off the map whatever their vehicle (now or before). */
    everyAvailable: COURIER_VEHICLE_TYPES.map((vehicle) => sets[vehicle]),
    /** Sorted set: each courier's last ping, in ms; a courier silent for COURIER_STALE_S is skipped. */
    seen: `${prefix}:couriers:seen`,
    fix: (courierId: string) => `${prefix}:courier:${courierId}:fix`,
    shift: (courierId: string) => `${prefix}:courier:${courierId}:shift`,
    gate: (courierId: string) => `${prefix}:courier:${courierId}:ping`,
    trail: (courierId: string) => `${prefix}:courier:${courierId}:trail`,
  }
}

// Made once per prefix (a deployment has one): a ping builds only its courier's key strings.
const keysByPrefix = new Map<string, ReturnType<typeof keysOf>>()
function keys(prefix: string): ReturnType<typeof keysOf> {
  let found = keysByPrefix.get(prefix)
  if (!found) keysByPrefix.set(prefix, (found = keysOf(prefix)))
  return found
}

/** One trail point per courier per this many seconds (DESIGN 14). */
export const TRAIL_EVERY_S = 30

/**
 * A courier found holding no order when a trail point fell due is not looked up again for this
 * long (a Postgres statement per idle courier per 5 minutes, not per 30 s), unless they take an
 * order first: `resumeTrail` then makes their next fix the order's first point.
 */
export const TRAIL_IDLE_S = 300

// A ping in one round trip: the one-a-second gate, the fix, when it was heard, its place in the
// dispatch set while on shift, and whether a trail point is due. -1: refused by the gate; -2: a
// fix older than the one kept (a phone sending queued fixes late), which stays; else 1 if a trail
// point is due, plus 2 if the courier has just entered the dispatch set. The trail window holds
// the time of the fix that opened it, so `restTrail` can tell it is still that one.
const PING = luaScript(`
if not redis.call('SET', KEYS[1], '1', 'PX', ARGV[1], 'NX') then return -1 end
local kept = redis.call('ZSCORE', KEYS[3], ARGV[5])
if kept and tonumber(kept) > tonumber(ARGV[4]) then return -2 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[3])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[5])
local answer = 0
if redis.call('GET', KEYS[4]) == 'available' and redis.call('GEOADD', KEYS[5], ARGV[6], ARGV[7], ARGV[5]) == 1 then answer = 2 end
if redis.call('SET', KEYS[6], ARGV[4], 'EX', ARGV[8], 'NX') then answer = answer + 1 end
return answer`)

/**
 * `joined`: the courier, on shift, has just entered the dispatch set (their first fix of the
 * shift). `stale`: the fix is older than the one kept, which stands (where they are is the newest).
 */
export type PingOutcome = { kind: 'too_soon' } | { kind: 'stale' } | { kind: 'recorded'; trailDue: boolean; joined: boolean }

/**
 * Records a courier's ping, at most one per `windowMs`: the fix, and an available courier's
 * position in the dispatch set. `trailDue`: the first fix in TRAIL_EVERY_S, which the caller
 * adds to the trails of the courier's orders.
 */
export async function recordPing(redis: RedisClient, prefix: string, courier: CourierOnMap, fix: CourierFix, windowMs = 1000): Promise<PingOutcome> {
  const k = keys(prefix)
  const courierId = courier.id
  const answer = Number(await PING(redis,
    [k.gate(courierId), k.fix(courierId), k.seen, k.shift(courierId), k.available(courier.vehicleType), k.trail(courierId)],
    [windowMs, JSON.stringify(fix), FIX_TTL_S, Date.parse(fix.at), courierId, fix.longitude, fix.latitude, TRAIL_EVERY_S]))
  if (answer === -1) return { kind: 'too_soon' }
  if (answer === -2) return { kind: 'stale' }
  return { kind: 'recorded', trailDue: (answer & 1) === 1, joined: (answer & 2) === 2 }
}

// Lengthens the trail window KEYS[1] only while it is still the one the fix ARGV[1] opened.
const REST = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 0`)

/**
 * The courier held no order when the trail point of `fix` fell due: the next look is in
 * TRAIL_IDLE_S. Only the window that fix opened is lengthened: one cleared since by
 * `resumeTrail` (an order taken meanwhile), or opened again by a later ping, is left as it is.
 */
export async function restTrail(redis: RedisClient, prefix: string, courierId: string, fix: CourierFix): Promise<void> {
  await REST(redis, [keys(prefix).trail(courierId)], [Date.parse(fix.at), TRAIL_IDLE_S])
}

/** The courier has just taken an order: their next fix is its trail's first point. */
export async function resumeTrail(redis: RedisClient, prefix: string, courierId: string): Promise<void> {
  await redis.del(keys(prefix).trail(courierId))
}

/** Records a fix without the gate or the trail: a courier placed by an operator or a test. */
export async function recordFix(redis: RedisClient, prefix: string, courier: CourierOnMap, fix: CourierFix): Promise<void> {
  const k = keys(prefix)
  const courierId = courier.id
  const shift = await redis.get(k.shift(courierId))
  const batch = redis.multi()
    .set(k.fix(courierId), JSON.stringify(fix), 'EX', FIX_TTL_S)
    .zadd(k.seen, Date.parse(fix.at), courierId)
  if (shift === 'available') batch.geoadd(k.available(courier.vehicleType), fix.longitude, fix.latitude, courierId)
  await batch.exec()
}

/**
 * On or off shift: off shift, the courier leaves the dispatch set at once; on shift with a fix,
 * they enter it. `joined`: they have just entered it (so orders waiting near them may be offered).
 */
export async function setShift(redis: RedisClient, prefix: string, courier: CourierOnMap, shift: CourierShift): Promise<{ joined: boolean }> {
  const k = keys(prefix)
  const courierId = courier.id
  if (shift === 'offline') {
    const batch = redis.multi().del(k.shift(courierId))
    for (const set of k.everyAvailable) batch.zrem(set, courierId)
    await batch.exec()
    return { joined: false }
  }
  const fix = await lastFix(redis, prefix, courierId)
  const batch = redis.multi().set(k.shift(courierId), 'available')
  if (fix) batch.geoadd(k.available(courier.vehicleType), fix.longitude, fix.latitude, courierId)
  const results = await batch.exec()
  return { joined: results?.[1]?.[1] === 1 }
}

/** Each courier's shift, in one round trip. */
export async function shiftsOf(redis: RedisClient, prefix: string, courierIds: string[]): Promise<Map<string, CourierShift>> {
  if (courierIds.length === 0) return new Map()
  const stored = await redis.mget(...courierIds.map((courierId) => keys(prefix).shift(courierId)))
  return new Map(courierIds.map((courierId, i) => [courierId, stored[i] === 'available' ? 'available' : 'offline']))
}

export async function shiftOf(redis: RedisClient, prefix: string, courierId: string): Promise<CourierShift> {
  return (await shiftsOf(redis, prefix, [courierId])).get(courierId) ?? 'offline'
}

export async function lastFix(redis: RedisClient, prefix: string, courierId: string): Promise<CourierFix | null> {
  return (await lastFixes(redis, prefix, [courierId])).get(courierId) ?? null
}

/** The last fix of each courier, in one round trip: a page of orders shows every courier's position. */
export async function lastFixes(redis: RedisClient, prefix: string, courierIds: string[]): Promise<Map<string, CourierFix>> {
  const unique = [...new Set(courierIds)]
  if (unique.length === 0) return new Map()
  const stored = await redis.mget(...unique.map((courierId) => keys(prefix).fix(courierId)))
  return new Map(unique.flatMap((courierId, i) => {
    const fix = stored[i] ? parseFix(stored[i]) : null
    return fix ? [[courierId, fix] as const] : []
  }))
}

/** How many couriers of each vehicle are on shift and on the map, in one round trip: the dispatcher's gauge. */
export async function countAvailable(redis: RedisClient, prefix: string): Promise<Map<CourierVehicleType, number>> {
  const batch = redis.multi()
  for (const set of keys(prefix).everyAvailable) batch.zcard(set)
  const counts = (await batch.exec()) ?? []
  return new Map(COURIER_VEHICLE_TYPES.map((vehicle, i) => [vehicle, Number(counts[i]?.[1] ?? 0)]))
}

function parseFix(stored: string): CourierFix | null {
  const value: unknown = JSON.parse(stored)
  if (typeof value !== 'object' || value === null || !('latitude' in value) || !('longitude' in value) || !('at' in value)) return null
  const { latitude, longitude, at } = value
  return typeof latitude === 'number' && typeof longitude === 'number' && typeof at === 'string' ? { latitude, longitude, at } : null
}

/** A look around a pickup: the couriers found, nearest first, and whether that was everyone in range. */
export interface NearbySearch {
  couriers: { courierId: string; km: number }[]
  /** False when the search stopped at its count: more couriers may be in range, farther out. */
  complete: boolean
}

/**
 * The couriers of these vehicles on shift within `radiusKm` of `point`, nearest first, at most
 * `count` of them, leaving out any not heard from for `staleS` seconds. One search per vehicle's
 * set, in one round trip, merged by distance.
 */
export async function nearbyCouriers(redis: RedisClient, prefix: string, vehicles: readonly CourierVehicleType[], point: Point, radiusKm: number, staleS: number, count: number, now = Date.now()): Promise<NearbySearch> {
  const k = keys(prefix)
  const batch = redis.multi()
  for (const vehicle of vehicles) batch.geosearch(k.available(vehicle), 'FROMLONLAT', point.lng, point.lat, 'BYRADIUS', radiusKm, 'km', 'ASC', 'COUNT', count, 'WITHDIST')
  const searches = (await batch.exec()) ?? []
  // Complete when no set's search stopped at its count: then every courier in range is here.
  const complete = searches.every(([, found]) => !Array.isArray(found) || found.length < count)
  const near = searches
    .flatMap(([, found]) => (Array.isArray(found) ? found : []))
    .flatMap((entry) => (Array.isArray(entry) && typeof entry[0] === 'string' ? [{ courierId: entry[0], km: Number(entry[1]) }] : []))
    .sort((a, b) => a.km - b.km)
    .slice(0, count)
  if (near.length === 0) return { couriers: [], complete }
  const seen = await redis.zmscore(k.seen, ...near.map((courier) => courier.courierId))
  return { couriers: near.filter((_courier, index) => Number(seen[index] ?? 0) >= now - staleS * 1000), complete }
}

// Takes out of the dispatch sets (KEYS[2..]) and out of `seen` (KEYS[1], so the next sweep looks
// past them) the couriers last heard from before ARGV[1], at most ARGV[2] of them; their next ping
// puts them back.
const DROP_SILENT = luaScript(`
local silent = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #silent > 0 then
  for i = 2, #KEYS do redis.call('ZREM', KEYS[i], unpack(silent)) end
  redis.call('ZREM', KEYS[1], unpack(silent))
end
return #silent`)

/**
 * DESIGN 14: a courier silent for `staleS` drops out of dispatch. Skipped by every search already,
 * they are also taken out of the dispatch set, so couriers who went quiet without going off shift
 * (a phone out of battery) cannot fill a busy area's nearest places; a ping puts them back, and
 * wakes the orders waiting near them. At most `limit` a call; the number taken out.
 */
export async function dropSilentCouriers(redis: RedisClient, prefix: string, staleS: number, limit: number, now = Date.now()): Promise<number> {
  const k = keys(prefix)
  return Number(await DROP_SILENT(redis, [k.seen, ...k.everyAvailable], [now - staleS * 1000, limit]))
}
