import { COURIER_VEHICLE_TYPES, OFF_SHIFT_REASON, type CourierShift, type CourierVehicleType } from '../courier.js'
import type { Order } from '../db/orders.js'
import { countActiveOrders, findDispatchCandidates, type CourierRow } from '../db/couriers.js'
import { closeOffer, dropOffer, hasPendingOffer, insertOffer, lastAcceptedBy, offersOfOrderSince, type Offer } from '../db/offers.js'
import { findOrderById, lockOrder } from '../db/orders.js'
import { pipelined } from '../db/pipelined.js'
import type { Sql } from '../db/sql.js'
import { nearbyCouriers, shiftOf } from '../couriers/positions.js'
import type { RedisClient } from '../redis.js'
import { newOfferId } from '../ids.js'
import { instruments } from '../telemetry/metrics.js'
import { activeTraceparent } from '../telemetry/tracing.js'
import { offerView } from './views.js'

/** DESIGN 14's dispatch settings. */
export interface DispatchSettings {
  radiusKm: number
  offerS: number
  maxOffers: number
  retryS: number
  capacity: number
  staleS: number
}

/** What one look for a courier came to: an offer made, nothing to do, or nobody now (look again later). */
export type DispatchStep =
  | { kind: 'offered'; offer: Offer; courierId: string; view: Record<string, unknown> }
  | { kind: 'not_needed'; why: 'not_found' | 'not_created' | 'test_mode' | 'not_located' | 'offer_pending' }
  | { kind: 'nobody' }

/**
 * DESIGN 14: whether a courier may carry the order. A rate-card order needs the vehicle it was
 * priced for (its option's weight band already bounds the load); a distance-priced order, any
 * vehicle that carries its weight × quantity.
 */
export function canCarry(courier: Pick<CourierRow, 'vehicleType' | 'maxWeightKg'>, order: Pick<Order, 'pricingModel' | 'vehicleType' | 'shipment'>): boolean {
  if (order.pricingModel === 'rate_card') return courier.vehicleType === order.vehicleType
  return courier.maxWeightKg >= Number(order.shipment.weight ?? 0) * Number(order.shipment.quantity ?? 1)
}

/** The vehicles whose dispatch sets are searched for the order: the one it was priced for, or any (weight decides, courier by courier). */
export function vehiclesFor(order: Pick<Order, 'pricingModel' | 'vehicleType'>): readonly CourierVehicleType[] {
  return order.pricingModel === 'rate_card' ? [order.vehicleType] : COURIER_VEHICLE_TYPES
}

/**
 * Offers a live `created` order to the nearest eligible courier: on shift and heard from lately,
 * within the radius, able to carry it, holding no pending offer and fewer than `capacity` active
 * orders, and not offered this order yet in this round (which began at `round`, or when the order
 * last became `created`), nor, in the round that follows a hand-back, to the courier who handed it
 * back. The offer is inserted under the order's lock, so a cancel in between
 * cannot leave it pending, and a look that finds the order offered meanwhile (seen before the
 * lock or under it) stops there; the database's unique indexes turn away a second pending offer
 * for the courier, and the next candidate is tried.
 */
export async function offerNext(sql: Sql, redis: RedisClient, prefix: string, settings: DispatchSettings, orderId: string, round: Date | null): Promise<DispatchStep> {
  const order = await findOrderById(sql, orderId)
  if (!order) return { kind: 'not_needed', why: 'not_found' }
  if (!order.livemode) return { kind: 'not_needed', why: 'test_mode' }
  if (order.status !== 'created') return { kind: 'not_needed', why: 'not_created' }
  if (order.pickupLat === null || order.pickupLng === null) return { kind: 'not_needed', why: 'not_located' }

  const becameCreated = new Date(order.history.at(-1)?.at ?? order.createdAt)
  const offers = await offersOfOrderSince(sql, order.id, becameCreated)
  // Asked again while its offer is out (a courier's wake or the sweep read the order just before
  // the offer committed): that offer's accept, decline or expiry moves it on.
  if (offers.some((offer) => offer.status === 'pending')) return { kind: 'not_needed', why: 'offer_pending' }
  const { since, offered } = currentRound(offers, round, becameCreated)
  if (offered.size >= settings.maxOffers) return { kind: 'nobody' }
  const pickup = { lat: order.pickupLat, lng: order.pickupLng }
  // The nearest few first, in the sets of the vehicles that may take it; when none of them can
  // (busy, or too small for a distance-priced load) and more may be in range, the search widens,
  // up to the nearest ten thousand.
  const looked = new Set(offered)
  // Handed back (a courier's unassign): the first round after it goes to someone else, since
  // whatever stopped that courier (a breakdown, a full bag) has not gone in a moment.
  const handedBackBy = since.getTime() === becameCreated.getTime() && order.history.length > 1 ? await lastAcceptedBy(sql, order.id) : null
  if (handedBackBy) looked.add(handedBackBy)
  const vehicles = vehiclesFor(order)
  for (const count of SEARCH_COUNTS) {
    const search = await nearbyCouriers(redis, prefix, vehicles, pickup, settings.radiusKm, settings.staleS, count)
    const near = search.couriers.filter((courier) => !looked.has(courier.courierId))
    for (const courier of near) looked.add(courier.courierId)
    const step = near.length === 0 ? null : await offerToFirstFree(sql, redis, prefix, settings, order, near, since)
    if (step) return step
    if (search.complete) break
  }
  return { kind: 'nobody' }
}

/**
 * How many of the nearest couriers each widening look takes. Bounded: one search of a whole
 * city's couriers would hold Redis (and every location ping) for tens of milliseconds; an order
 * that ten thousand nearer couriers cannot take waits for its retry.
 */
const SEARCH_COUNTS = [100, 1000, 10_000]

/**
 * The dispatch round under way and whom it has asked. A look that starts a round names it
 * (`round`: a retry's new round); any other goes on with the round of the order's latest offer,
 * whatever queued it (an expiry, a decline, a courier come free, the sweep), so a decline in the
 * second round goes to that round's next courier. Offers that name no round (made before rounds
 * were kept, or by hand) belong to the round that began when the order became `created`.
 */
function currentRound(offers: Pick<Offer, 'courierId' | 'createdAt' | 'roundStartedAt'>[], round: Date | null, becameCreated: Date): { since: Date; offered: Set<string> } {
  const roundOf = (offer: Pick<Offer, 'roundStartedAt'>) => (offer.roundStartedAt ?? becameCreated).getTime()
  const latest = offers.at(-1)
  const since = Math.max(round?.getTime() ?? (latest ? roundOf(latest) : 0), becameCreated.getTime())
  return { since: new Date(since), offered: new Set(offers.filter((offer) => roundOf(offer) >= since).map((offer) => offer.courierId)) }
}

/** Offers the order to the first of `near` (nearest first) who may take it now, in the round begun at `round`; null if none could. */
async function offerToFirstFree(sql: Sql, redis: RedisClient, prefix: string, settings: DispatchSettings, order: Order, near: { courierId: string; km: number }[], round: Date): Promise<DispatchStep | null> {
  const candidates = new Map((await findDispatchCandidates(sql, near.map((courier) => courier.courierId))).map((courier) => [courier.id, courier]))
  for (const { courierId, km } of near) {
    const courier = candidates.get(courierId)
    if (!courier || courier.offerPending || courier.activeOrders >= settings.capacity || !canCarry(courier, order)) continue
    const offer = await pipelined(sql, async (tx, commit) => {
      // Both in one round trip; the second runs once the first holds the lock.
      const [locked, pending] = await Promise.all([lockOrder(tx, order.id, null), hasPendingOffer(tx, order.id)])
      if (!locked || locked.status !== 'created') return 'gone' as const
      // Offered meanwhile by another look: every insert would meet the order's unique index.
      if (pending) return 'pending' as const
      // The load read above may be stale: the courier may have accepted another order since. The
      // count runs after the insert, which waited for any accept of their pending offer to
      // commit, so it is exact.
      const [made, active] = await Promise.all([
        insertOffer(tx, { id: newOfferId(), orderId: order.id, courierId, offerS: settings.offerS, traceparent: activeTraceparent(), roundStartedAt: round }),
        countActiveOrders(tx, [courierId]),
      ])
      if (made && (active.get(courierId) ?? 0) >= settings.capacity) return commit([dropOffer(tx, made.id)], () => null)
      return made
    })
    if (offer === 'gone') return { kind: 'not_needed', why: 'not_created' }
    if (offer === 'pending') return { kind: 'not_needed', why: 'offer_pending' }
    // Null: the courier got an offer for another order meanwhile, or a full load.
    if (!offer) continue
    if (await wentOffShift(sql, redis, prefix, offer)) continue
    return { kind: 'offered', offer, courierId, view: offerView(offer, order, km) }
  }
  return null
}

/**
 * Whether the courier went off shift between the search that found them and the offer's commit,
 * and so after their own off-shift scan of pending offers: the offer is then declined for them
 * as that scan would have (`went off shift`). Going off shift clears the shift before it scans,
 * and this reads the shift after the commit, so one side or the other always sees the offer.
 * Without Redis now, the offer stands, to expire as any other.
 */
async function wentOffShift(sql: Sql, redis: RedisClient, prefix: string, offer: Offer): Promise<boolean> {
  const shift = await shiftOf(redis, prefix, offer.courierId).catch((): CourierShift => 'available')
  if (shift === 'available') return false
  // Counted as made and declined, as the courier's own off-shift scan would have left it.
  const { dispatchOffers } = instruments()
  dispatchOffers.add(1, { outcome: 'offered' })
  if (await closeOffer(sql, offer.id, 'declined', OFF_SHIFT_REASON)) dispatchOffers.add(1, { outcome: 'declined' })
  return true
}
