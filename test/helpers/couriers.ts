import type { FastifyInstance } from 'fastify'
import type { CourierVehicleType } from '../../shared/courier.js'
import type { Sql } from '../../shared/db/sql.js'
import { createdCourier } from './courier-accounts.js'
import { waitForValue } from './processes.js'
import { bearer } from './stack.js'

/*
 * Couriers as the dispatch tests use them: created as `courier:create` makes them, on shift and
 * located through the gateway's courier API, and the offers the database holds for an order.
 */

const WAIT_MS = 15_000

/** A point `km` north of `from` (a degree of latitude is 111.19 km). */
export function kmNorth(from: { lat: number; lng: number }, km: number): { lat: number; lng: number } {
  return { lat: from.lat + km / 111.19, lng: from.lng }
}

export interface TestCourier {
  id: string
  token: string
  auth: Record<string, string>
}

export interface CourierSetup {
  vehicleType?: CourierVehicleType
  maxWeightKg?: number
  /** When the position was taken, if not now: an old fix makes a stale courier. */
  fixAt?: Date
  /** Left offline after the ping. */
  offline?: boolean
}

/** A new courier, on shift (unless asked otherwise) at `at`, through the gateway. */
export async function onShift(gateway: FastifyInstance, sql: Sql, name: string, at: { lat: number; lng: number }, setup: CourierSetup = {}): Promise<TestCourier> {
  const vehicleType = setup.vehicleType ?? 'bike'
  const created = await createdCourier(sql, { name, vehicleType, maxWeightKg: setup.maxWeightKg ?? null })
  const auth = bearer(created.token)
  const shift = await gateway.inject({ method: 'POST', url: '/v2/courier/shift', headers: auth, payload: { status: setup.offline ? 'offline' : 'available' } })
  if (shift.statusCode !== 200) throw new Error(`shift: ${shift.statusCode} ${shift.body}`)
  await ping(gateway, auth, at, setup.fixAt)
  return { id: created.courier.id, token: created.token, auth }
}

/** A location ping, sent again while the one-a-second limit turns it away. */
export async function ping(gateway: FastifyInstance, auth: Record<string, string>, at: { lat: number; lng: number }, fixAt?: Date): Promise<void> {
  const payload = fixAt ? { latitude: at.lat, longitude: at.lng, at: fixAt.toISOString() } : { latitude: at.lat, longitude: at.lng }
  const sent = await waitForValue(() => gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: auth, payload }), (response) => response.statusCode !== 429, 3000, 100)
  if (sent.value.statusCode !== 204) throw new Error(`location: ${sent.value.statusCode} ${sent.value.body}`)
}

/** Places these shipments as one live (or sandbox, by the key) placement; the order ids in order. */
export async function placeOrders(gateway: FastifyInstance, apiKey: string, shipments: Record<string, unknown>[]): Promise<string[]> {
  const placed = await waitForValue(
    () => gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(apiKey), 'idempotency-key': `k-${Math.random()}` }, payload: shipments }),
    (response) => response.statusCode === 201, WAIT_MS, 100)
  if (placed.value.statusCode !== 201) throw new Error(`placement: ${placed.value.statusCode} ${placed.value.body}`)
  return (placed.value.json().orders as { order_id: string }[]).map((order) => order.order_id)
}

export interface OfferRow {
  id: string
  orderId: string
  courierId: string
  status: string
}

/** Every offer of the order, oldest first. */
export function offersOf(sql: Sql, orderId: string): Promise<OfferRow[]> {
  return sql<OfferRow[]>`select id, order_id, courier_id, status from dispatch_offers where order_id = ${orderId} order by created_at, id`
}

/** Waits for the order's first offer; null if none came within the deadline. */
export async function firstOffer(sql: Sql, orderId: string, timeoutMs = WAIT_MS): Promise<OfferRow | null> {
  const seen = await waitForValue(() => offersOf(sql, orderId), (rows) => rows.length > 0, timeoutMs, 50)
  return seen.value[0] ?? null
}

/** Waits for a pending offer of the order that is not one of `besides`; null if none came. */
export async function pendingOffer(sql: Sql, orderId: string, besides: string[] = [], timeoutMs = WAIT_MS): Promise<OfferRow | null> {
  const seen = await waitForValue(() => offersOf(sql, orderId), (rows) => rows.some((row) => row.status === 'pending' && !besides.includes(row.id)), timeoutMs, 50)
  return seen.value.find((row) => row.status === 'pending' && !besides.includes(row.id)) ?? null
}
