import { HELD_STATUSES, OFF_SHIFT_REASON, type CourierFix, type CourierShift, type OrderStatus } from '../courier.js'
import { findHeldOrdersOfCourier, type CourierRow } from '../db/couriers.js'
import { closeOffer, findOffer, findPendingOffersOfCourier, type Offer } from '../db/offers.js'
import { findOrderById, type Order } from '../db/orders.js'
import type { Sql } from '../db/sql.js'
import { appendTrailPoint } from '../db/trails.js'
import { afterOrderChange } from '../dispatch/after-change.js'
import type { DispatchQueue } from '../dispatch/queue.js'
import { courierOnOrder, offerView } from '../dispatch/views.js'
import { ApiError } from '../errors/api-error.js'
import { isOfferId, isOrderId } from '../ids.js'
import { changeOrder, closedOfferMessage, type DeliveryPhoto, type OrderChangeOutcome } from '../orders/change.js'
import { orderChangeRefusal, orderNotFound } from '../orders/refusals.js'
import { findMove, illegalMoveMessage } from '../orders/state-machine.js'
import { haversineKm } from '../pricing/distance.js'
import { unavailableWithoutRedis, type RedisClient } from '../redis.js'
import { newPhotoKey, PHOTO_MAX_BYTES, photoTypeOf, type PhotoStore } from '../storage/photos.js'
import { instruments } from '../telemetry/metrics.js'
import { continuingTrace, inSpan } from '../telemetry/tracing.js'
import { lastFix, recordPing, restTrail, setShift, type CourierOnMap } from './positions.js'

// What a courier does (DESIGN 14), one function per step, shared by the courier API
// (services/gateway/routes/courier.ts) and the courier web app (services/console): each refusal
// is an ApiError, which the gateway answers as the spec's error body and the app shows as is.

/** What a courier's steps need. */
export interface CourierDesk {
  sql: Sql
  redis: RedisClient
  /** The deployment's queue prefix (its Redis hash tag). */
  prefix: string
  dispatch: DispatchQueue
  photos: PhotoStore
  /** Where integrators call the API: the base of a delivery photo's link. */
  publicBaseUrl: string
  warn(err: unknown, message: string): void
}

/** An order's moves a courier makes, with what each needs. */
export type CourierMove =
  | { to: 'picked_up' | 'returned' }
  | { to: 'failed' | 'created'; reason: string }
  | { to: 'delivered'; pin: string | null; photo: Buffer | null }

/** An order trail keeps this many points: 8 hours at one point per 30 s. */
const TRAIL_MAX_POINTS = 960

/**
 * On or off shift; on the map already (a fix known), the orders waiting near them are looked at
 * now. Off shift, their pending offers are declined for them, so those orders go on to the next
 * courier at once rather than when the offers expire. The shift is cleared before the scan: an
 * offer committed after the scan is declined by dispatch itself, which reads the shift after its
 * commit (shared/dispatch/dispatch.ts).
 */
export async function changeShift(desk: CourierDesk, courier: CourierOnMap, shift: CourierShift): Promise<CourierShift> {
  const { joined } = await setShift(desk.redis, desk.prefix, courier, shift).catch(unavailableWithoutRedis)
  if (joined) await desk.dispatch.courierFree(courier.id)
  if (shift === 'offline') {
    for (const offer of await findPendingOffersOfCourier(desk.sql, courier.id)) await letOfferGo(desk, offer, OFF_SHIFT_REASON)
  }
  return shift
}

/**
 * A location ping: one Redis round trip, at most one a second per courier (`too_soon` beyond); a trail
 * point costs at most one Postgres statement per courier per 30 s, whatever the ping rate. A fix
 * older than the one kept is taken and dropped (`stale`): the phone did its part, and where the
 * courier is stays the newest fix.
 */
export async function reportLocation(desk: CourierDesk, courier: CourierOnMap, fix: CourierFix): Promise<'recorded' | 'stale' | 'too_soon'> {
  let ping: Awaited<ReturnType<typeof recordPing>>
  try {
    ping = await recordPing(desk.redis, desk.prefix, courier, fix)
  } catch (err) {
    unavailableWithoutRedis(err)
  }
  if (ping.kind !== 'recorded') return ping.kind
  // A point due, and no order held to add it to: an idle courier is looked up again in TRAIL_IDLE_S.
  // The rest is a saving only: unrecorded (Redis gone since the ping), the next due ping asks Postgres again.
  if (ping.trailDue && await appendTrailPoint(desk.sql, courier.id, fix, TRAIL_MAX_POINTS) === 0) {
    await restTrail(desk.redis, desk.prefix, courier.id, fix).catch((err: unknown) => desk.warn(err, 'idle courier\'s trail rest not recorded'))
  }
  // On shift and now on the map (their first fix): the orders waiting near them are looked at now.
  if (ping.joined) await desk.dispatch.courierFree(courier.id)
  instruments().locationUpdates.add(1)
  return 'recorded'
}

/**
 * The courier's last fix, for the distance to a pickup or the order's record of a move; without
 * Redis, none: offers, accepts and moves stand on Postgres alone.
 */
function fixIfKnown(desk: CourierDesk, courierId: string): Promise<CourierFix | null> {
  return lastFix(desk.redis, desk.prefix, courierId).catch((err: unknown) => {
    desk.warn(err, 'courier position unavailable')
    return null
  })
}

/** The courier's pending offers of orders still waiting, as they are shown. */
export async function pendingOffers(desk: CourierDesk, courierId: string): Promise<Record<string, unknown>[]> {
  const [offers, fix] = await Promise.all([findPendingOffersOfCourier(desk.sql, courierId), fixIfKnown(desk, courierId)])
  const shown = []
  for (const offer of offers) {
    const order = await findOrderById(desk.sql, offer.orderId)
    if (order?.status === 'created') shown.push(offerView(offer, order, kmToPickup(fix, order)))
  }
  return shown
}

/** How far the courier's last fix is from the pickup, as the crow flies; null when either is unknown. */
function kmToPickup(fix: CourierFix | null, order: Order): number | null {
  if (!fix || order.pickupLat === null || order.pickupLng === null) return null
  return haversineKm({ lat: fix.latitude, lng: fix.longitude }, { lat: order.pickupLat, lng: order.pickupLng })
}

/** Accepts an offer: the order is the courier's, in the trace that made the offer (placement → dispatch → offer → accept). */
export async function acceptOffer(desk: CourierDesk, courier: CourierRow, offerId: string): Promise<Order> {
  const offer = await ownOffer(desk, offerId, courier.id)
  if (offer.status === 'accepted') return acceptedBefore(desk, courier.id, offer)
  const location = await fixIfKnown(desk, courier.id)
  const outcome = await continuingTrace(offer.traceparent, () => inSpan('courier.accept', { 'courier.order_id': offer.orderId }, () =>
    changeOrder(desk.sql, { orderId: offer.orderId, scope: null }, {
      kind: 'advance', to: 'assigned', reason: null, offer: { id: offer.id, courierId: courier.id }, location, courier: courierOnOrder(courier),
    })))
  if (outcome.kind !== 'changed') {
    // A double tap: the other accept of the same offer may have won the order for this courier.
    const now = await ownOffer(desk, offerId, courier.id)
    if (now.status === 'accepted') return acceptedBefore(desk, courier.id, now)
    throw refusal(outcome, offer.orderId)
  }
  await afterOrderChange(desk, outcome, (err) => desk.warn(err, 'courier notice lost'))
  await desk.dispatch.offerSettled(offer.id)
  const metrics = instruments()
  metrics.dispatchOffers.add(1, { outcome: 'accepted' })
  const order = outcome.row
  const since = order.history.filter((entry) => entry.status === 'created').at(-1)?.at
  if (since) metrics.timeToAssign.record((Date.now() - Date.parse(since)) / 1000)
  return order
}

/**
 * A second accept of an offer the courier took (a double tap, a retry after a lost answer) answers
 * as the first did while they hold its order; once they no longer hold it, a 409 says so.
 */
async function acceptedBefore(desk: CourierDesk, courierId: string, offer: Offer): Promise<Order> {
  const order = await findOrderById(desk.sql, offer.orderId)
  if (order && order.courierId === courierId && HELD_STATUSES.includes(order.status)) return order
  throw new ApiError(409, `Offer ${offer.id} was accepted before, and its order is no longer yours`)
}

/** Declines an offer: the order goes on to its next courier, and the courier may take another waiting nearby. */
export async function declineOffer(desk: CourierDesk, courierId: string, offerId: string, reason: string | null): Promise<void> {
  const offer = await ownOffer(desk, offerId, courierId)
  // A retry of a decline (a double tap, an answer lost) finds it done: nothing more to do.
  if (offer.status === 'declined') return
  if (await letOfferGo(desk, offer, reason)) {
    await desk.dispatch.courierFree(courierId)
    return
  }
  const closed = await ownOffer(desk, offerId, courierId)
  if (closed.status !== 'declined') throw new ApiError(409, closedOfferMessage(closed, new Date()))
}

/** Closes a pending offer `declined` and sends its order on to the next courier; false if it was no longer pending. */
async function letOfferGo(desk: CourierDesk, offer: Offer, reason: string | null): Promise<boolean> {
  const declined = await closeOffer(desk.sql, offer.id, 'declined', reason)
  if (!declined) return false
  instruments().dispatchOffers.add(1, { outcome: 'declined' })
  await desk.dispatch.offerSettled(offer.id)
  await desk.dispatch.offerAgain(offer.orderId)
  return true
}

/**
 * Moves an order the courier holds, through the one state machine. A delivery's photo (JPEG or
 * PNG by its bytes, ≤ 5 MB) is stored first and removed again if the order refuses the move;
 * only for an order the courier holds and may deliver now, so another's (or none) is the 404 and
 * one not yet picked up the 409, with nothing written. A move the courier made already (a retry
 * after a lost answer, on a phone between cells) is answered with the order as it stands, with
 * nothing written or stored again; a hand-back (`created`) leaves no order of theirs to find.
 */
export async function moveOrder(desk: CourierDesk, courier: CourierRow, orderId: string, move: CourierMove): Promise<Order> {
  if (!isOrderId(orderId)) throw orderNotFound(orderId)
  const photo = move.to === 'delivered' && move.photo && !(await deliveredBy(desk, courier.id, orderId)) ? await storePhoto(desk, courier.id, orderId, move.photo) : null
  const reason = 'reason' in move ? move.reason : null
  const proof = move.to === 'delivered' ? { pin: move.pin, photo } : {}
  const location = await fixIfKnown(desk, courier.id)
  const outcome = await changeOrder(desk.sql, { orderId, scope: { courierId: courier.id } }, { kind: 'advance', to: move.to satisfies OrderStatus, courier: null, reason, location, retry: true, ...proof })
  if (outcome.kind !== 'changed') {
    if (photo) await desk.photos.remove(photo.key).catch((err: unknown) => desk.warn(err, 'refused delivery photo left in the store'))
    if (outcome.kind === 'unchanged') return orderAsItStands(desk, orderId)
    throw refusal(outcome, orderId)
  }
  // Handed back: dispatch offers it to the next courier. Free again: orders waiting near them are looked at now.
  await afterOrderChange(desk, outcome, (err) => desk.warn(err, 'courier notice lost'))
  return outcome.row
}

/** Whether the courier delivered this order already: a retried delivery stores no second photo. */
async function deliveredBy(desk: CourierDesk, courierId: string, orderId: string): Promise<boolean> {
  const order = await findOrderById(desk.sql, orderId)
  return order?.courierId === courierId && order.status === 'delivered'
}

/** The order a retried move found where it was going (the courier's, by the move's scope). */
async function orderAsItStands(desk: CourierDesk, orderId: string): Promise<Order> {
  const order = await findOrderById(desk.sql, orderId)
  if (!order) throw orderNotFound(orderId)
  return order
}

async function storePhoto(desk: CourierDesk, courierId: string, orderId: string, bytes: Buffer): Promise<DeliveryPhoto> {
  // Only for a delivery the state machine may make now (the move itself asks it again, under the order's lock).
  const held = await orderHeldBy(desk, courierId, orderId)
  if (!findMove(held.status, 'delivered', 'dispatch')) throw orderChangeRefusal({ kind: 'refused', message: illegalMoveMessage(orderId, held.status, 'delivered') })
  if (bytes.length > PHOTO_MAX_BYTES) throw photoTooLarge()
  const type = photoTypeOf(bytes)
  if (!type) throw new ApiError(400, 'photo must be a JPEG or PNG image', { errors: [{ field: 'photo', message: 'photo must be a JPEG or PNG image' }] })
  const key = newPhotoKey(orderId, type)
  await desk.photos.put(key, { bytes, contentType: type })
  return { key, url: `${desk.publicBaseUrl}/v2/business/orders/${orderId}/proof/photo` }
}

export const photoTooLarge = () => new ApiError(413, `photo must be at most ${PHOTO_MAX_BYTES / 1024 / 1024} MB`)

/** The courier's own offer, or the 404 another courier's (or no) offer gets. */
async function ownOffer(desk: CourierDesk, offerId: string, courierId: string): Promise<Offer> {
  const offer = isOfferId(offerId) ? await findOffer(desk.sql, offerId) : null
  if (!offer || offer.courierId !== courierId) throw new ApiError(404, `Offer ${offerId} was not found`)
  return offer
}

/** The orders the courier holds now (assigned, picked up, or failed and to be returned), oldest assignment first. */
export function ordersHeldBy(desk: Pick<CourierDesk, 'sql'>, courierId: string): Promise<Order[]> {
  return findHeldOrdersOfCourier(desk.sql, courierId)
}

/**
 * One order the courier holds, in full: what an app that lost the answer of its accept (a phone
 * restarted mid-delivery) reads again. Another courier's order, one only offered, or one at rest
 * is the same 404: what the courier no longer holds they no longer see (the recipient included).
 */
export async function orderHeldBy(desk: Pick<CourierDesk, 'sql'>, courierId: string, orderId: string): Promise<Order> {
  const order = isOrderId(orderId) ? await findOrderById(desk.sql, orderId) : null
  if (!order || order.courierId !== courierId || !HELD_STATUSES.includes(order.status)) throw orderNotFound(orderId)
  return order
}

/** A courier's move the order refused. */
function refusal(outcome: Exclude<OrderChangeOutcome, { kind: 'changed' }>, orderId: string): ApiError {
  // Answered before it gets here: only a cancel or a retried move finds its order where it was going.
  if (outcome.kind === 'unchanged') return new ApiError(409, `${orderId} is already ${String(outcome.order.status)}`)
  return orderChangeRefusal(outcome)
}
