import { timingSafeEqual } from 'node:crypto'
import { z } from 'zod'
import { HELD_STATUSES, type Courier, type CourierFix, type OrderMover, type OrderStatus, type PlatformRates } from '../courier.js'
import { COURIER_NOTICE_EVENTS, type CourierNotice } from '../couriers/stream.js'
import { insertAudit } from '../db/audit.js'
import { appendEvents } from '../db/events.js'
import { closeOffer, lockOffer, lockPendingOffersOfCourier, withdrawOffersOfCourier, withdrawOffersOfOrder, type Offer } from '../db/offers.js'
import { lockOrder, recordWrongPin, updateOrder, type Order, type OrderAccess } from '../db/orders.js'
import { getPlatformRates } from '../db/platform-rates.js'
import { pipelined } from '../db/pipelined.js'
import { transactionNow, type Sql } from '../db/sql.js'
import { refundWallet } from '../db/wallets.js'
import { newEventId } from '../ids.js'
import { toMajor } from '../money.js'
import { instruments } from '../telemetry/metrics.js'
import { activeTraceparent, inSpan, sqlSpan } from '../telemetry/tracing.js'
import { cancellationTerms, cancelRefusalMessage } from './cancellation.js'
import { orderAsShown, photoRequired } from './resource.js'
import { findMove, illegalMoveMessage, type Move } from './state-machine.js'

/** What is asked of an order: a dispatch move (a courier, the operator CLI, the sandbox courier) or a cancel. */
export type OrderChange =
  // `expectedVersion`: move only if the order is still at that version (the sandbox courier's steps).
  // `offer`: the courier's accepted offer, closed in the same transaction as the assignment.
  // `location`: the moving courier's last fix, for the event's `courier.location` and `eta`.
  // `pin`: a courier's delivery, with the PIN they were given (null: none); the operator's has none to check.
  // `photo`: a courier's delivery photo, already in the photo store, and the business's link to it.
  // `retry`: asking again is a retry (the operator's CLI): an order already at `to`, with the same courier for `assigned`, is answered unchanged.
  | { kind: 'advance'; to: OrderStatus; courier: Courier | null; reason: string | null; expectedVersion?: number; offer?: { id: string; courierId: string }; location?: CourierFix | null; pin?: string | null; photo?: DeliveryPhoto | null; retry?: boolean }
  | { kind: 'cancel'; by: 'business' | 'operator'; reason: string | null }

export interface DeliveryPhoto {
  key: string
  url: string
}

const resource = z.record(z.string(), z.unknown())

/**
 * How a change ended: the one value the gateway (services/gateway/order-answer.ts) and the CLI
 * map to their answers. `order` is the resource as it stands after the change.
 */
const courierNotice = z.object({ courierId: z.string(), event: z.enum(COURIER_NOTICE_EVENTS), data: resource })

export const orderChangeOutcomeSchema = z.discriminatedUnion('kind', [
  // `notices`: what couriers must hear once this has committed (an offer withdrawn, an order cancelled).
  // `row`: the order as this change wrote it, for a courier's answer, which shows what the row holds.
  // `freed`: the registered couriers this change left free to take another order, for dispatch to wake.
  // `reoffer`: other orders whose offer this change withdrew (their courier was given this one), for dispatch to offer again.
  z.object({ kind: z.literal('changed'), order: resource, row: z.custom<Order>(), notices: z.array(courierNotice), freed: z.array(z.string()), reoffer: z.array(z.string()) }),
  // A cancelled order cancelled again, or a retried move that finds the order already there: the same answer, nothing moved.
  z.object({ kind: z.literal('unchanged'), order: resource }),
  z.object({ kind: z.literal('not_found'), orderId: z.string() }),
  // The state machine refuses the move (409 / exit 1).
  z.object({ kind: z.literal('refused'), message: z.string() }),
  // The move is allowed but the request lacks what it needs, such as a reason (400 / exit 1).
  // `field`: the part of the request at fault (`pin`, `photo`), for a client to act on without reading the message.
  z.object({ kind: z.literal('invalid'), message: z.string(), field: z.string().optional() }),
  // The order changed since the version the change was meant for; nothing was done (409).
  z.object({ kind: z.literal('moved_on'), message: z.string() }),
])

export type OrderChangeOutcome = z.infer<typeof orderChangeOutcomeSchema>

/** A move the machine allows, worked out: the order after it and the money it returns. */
interface Decided {
  kind: 'move'
  move: Move
  next: Order
  refund: number
}

type Decision = Decided | { kind: 'already_there' } | { kind: 'wrong_pin' } | Extract<OrderChangeOutcome, { kind: 'refused' | 'invalid' | 'moved_on' }>

/** Why a courier's pending offer was withdrawn when an operator gave them another order. */
const GIVEN_ANOTHER = 'given another order'

/** Wrong PINs a courier may give for one order; the last of them locks its delivery (DESIGN 14). */
export const PIN_TRIES = 5

/**
 * Changes one order, the only way any order changes. In one transaction: the order row is
 * locked, the move is checked against the state machine, and the new row, its event (with the
 * next sequence of the business) and any refund are written, in the lock order of
 * docs/contracts.md section 6. `scope` null is the operator, who may reach any order, and
 * `{ courierId }` the courier holding it; `audit` names the operator whose change goes on the
 * audit trail. Who made the move is kept in its history step (see `moverOf`). A change that takes
 * an order from `created` withdraws its pending offer.
 */
export function changeOrder(sql: Sql, target: { orderId: string; scope: OrderAccess }, change: OrderChange, audit: { actor: string } | null = null): Promise<OrderChangeOutcome> {
  const attributes = { 'courier.order_id': target.orderId, 'courier.change': change.kind === 'cancel' ? `cancel by ${change.by}` : change.to }
  return inSpan('order.change', attributes, (span) => pipelined(sql, async (tx, commit) => {
    const accepting = change.kind === 'advance' ? change.offer ?? null : null
    // A registered courier given this order by hand: the pending offers of others they hold are
    // withdrawn at commit, so they are locked now, in the lock order (orders, then offers). Taken
    // there, behind the event counter, they would wait on an accept of one that waits on it.
    const assigning = change.kind === 'advance' && change.to === 'assigned' && !accepting ? change.courier?.id ?? null : null
    // One round trip, run in this order: the order's lock first, then the offers' (the lock order).
    const [order, rates, now, offer] = await Promise.all([
      sqlSpan('lock order', () => lockOrder(tx, target.orderId, target.scope)),
      sqlSpan('load platform rates', () => getPlatformRates(tx)),
      transactionNow(tx),
      accepting && sqlSpan('lock offer', () => lockOffer(tx, accepting.id, accepting.courierId)),
      assigning && sqlSpan('lock their offers', () => lockPendingOffersOfCourier(tx, assigning)),
    ])
    if (!order) return { kind: 'not_found', orderId: target.orderId } satisfies OrderChangeOutcome
    const by = moverOf(target.scope, change, audit)
    const decision = accepting ? offerRefusal(offer, order, now) ?? decide(order, change, rates, now, by) : decide(order, change, rates, now, by)
    span.setAttribute('courier.outcome', decision.kind)
    if (decision.kind === 'already_there') return { kind: 'unchanged', order: orderAsShown(order, rates, now) } satisfies OrderChangeOutcome
    // The try is counted and kept, though nothing else changes.
    if (decision.kind === 'wrong_pin') {
      return commit([sqlSpan('count wrong pin', () => recordWrongPin(tx, order.id))], ([tries]): OrderChangeOutcome => tries >= PIN_TRIES
        ? { kind: 'refused', message: tooManyPins(order.id) }
        : { kind: 'invalid', message: `Wrong PIN for ${order.id}`, field: 'pin' })
    }
    if (decision.kind !== 'move') return decision

    const { next, move, refund } = decision
    const assignee = order.status === 'created' && !offer ? next.courierId : null
    const shown = orderAsShown(next, rates, now, change.kind === 'advance' ? change.location ?? null : null)
    const scope = { businessId: next.businessId, livemode: next.livemode }
    const event = { id: newEventId(), type: move.event, orderId: next.id, orderVersion: next.version, data: { order: shown }, createdAt: now }
    // One round trip with the COMMIT, in the lock order: the order (held), the event counter, the
    // wallet; the last write takes back whatever offer is pending when the order leaves `created`
    // otherwise than by this offer.
    return commit([
      sqlSpan('update order', () => updateOrder(tx, next)),
      sqlSpan('append event', () => appendEvents(tx, scope, [event], activeTraceparent())),
      sqlSpan('refund wallet', () => refundWallet(tx, next.businessId, refund, next.id, next.livemode)),
      // An operator's change (CLI or console) is on the audit trail, in the same transaction.
      audit && insertAudit(tx, {
        actor: audit.actor, action: `order.${change.kind}`, businessId: next.businessId, subject: next.id,
        before: { status: order.status }, after: { status: next.status, refund: toMajor(refund) },
      }),
      offer && sqlSpan('accept offer', () => closeOffer(tx, offer.id, 'accepted', null)),
      order.status === 'created' && !offer ? sqlSpan('withdraw offers', () => withdrawOffersOfOrder(tx, order.id, move.event)) : [],
      // Given this order by hand (an operator), a registered courier is withdrawn the offer of another
      // they hold: at COURIER_CAPACITY (1) they could not take both, and dispatch, which knows the
      // capacity, offers that order again (to them too, if they have room).
      assignee ? sqlSpan('withdraw their other offer', () => withdrawOffersOfCourier(tx, assignee, GIVEN_ANOTHER)) : [],
    ], ([, , , , , ofOrder, ofCourier]): OrderChangeOutcome => {
      const withdrawn = [...ofOrder, ...ofCourier]
      countChange(move, next, refund, withdrawn.length)
      const reoffer = ofCourier.map((other) => other.orderId)
      return { kind: 'changed', order: shown, row: next, notices: noticesOf(order, next, withdrawn), freed: freedBy(order, next, withdrawn), reoffer }
    })
  }))
}

/** Why an accepted offer cannot assign the order: it is not pending, or its time is up. Null: it can. */
function offerRefusal(offer: Offer | null, order: Order, now: Date): Extract<OrderChangeOutcome, { kind: 'refused' }> | null {
  if (!offer || offer.orderId !== order.id) return { kind: 'refused', message: `Offer was not found for ${order.id}` }
  if (offer.status !== 'pending' || offer.expiresAt <= now || order.status !== 'created') return { kind: 'refused', message: closedOfferMessage(offer, now) }
  return null
}

/**
 * What a courier is told of an offer no longer open (DESIGN 14): `has expired` once its time is up,
 * `was withdrawn` when the order was taken from it (a cancel, another assignment), and what they
 * did themselves when they decided it (`was accepted`, `was declined`).
 */
export function closedOfferMessage(offer: Pick<Offer, 'id' | 'status' | 'expiresAt'>, now: Date): string {
  if (offer.status === 'expired' || (offer.status === 'pending' && offer.expiresAt <= now)) return `Offer ${offer.id} has expired`
  if (offer.status === 'accepted' || offer.status === 'declined') return `Offer ${offer.id} was ${offer.status}`
  return `Offer ${offer.id} was withdrawn`
}

/**
 * What couriers hear of this change: offers withdrawn, a cancel of an order one of them holds, an
 * order handed back from them to dispatch by someone else (an operator), and an order given them
 * by someone else (an operator's assignment; their own accept they know of). A withdrawal says
 * why, as the dispatcher's `expired` does: the order was `cancelled`, or an operator `assigned` it
 * to someone (the only moves out of `created` without the offer), or gave the courier another
 * order (`given another order`).
 */
function noticesOf(before: Order, after: Order, withdrawn: Offer[]): CourierNotice[] {
  const reasonFor = (offer: Offer) => offer.orderId !== before.id ? GIVEN_ANOTHER : after.status === 'cancelled' ? 'cancelled' : 'assigned'
  const notices: CourierNotice[] = withdrawn.map((offer) => ({ courierId: offer.courierId, event: 'offer_withdrawn', data: { offer_id: offer.id, order_id: offer.orderId, reason: reasonFor(offer) } }))
  if (after.status === 'cancelled' && before.courierId) notices.push({ courierId: before.courierId, event: 'order_cancelled', data: { order_id: before.id } })
  if (after.status === 'created' && before.courierId && isHeld(before) && after.history.at(-1)?.by !== 'courier') {
    notices.push({ courierId: before.courierId, event: 'order_unassigned', data: { order_id: before.id, reason: after.history.at(-1)?.reason ?? null } })
  }
  if (after.status === 'assigned' && after.courierId && before.status === 'created' && after.history.at(-1)?.by !== 'courier') {
    notices.push({ courierId: after.courierId, event: 'order_assigned', data: { order_id: after.id } })
  }
  return notices
}

/** Whether a courier holds the order: assigned, picked up, or failed and to be returned. */
const isHeld = (order: Order): boolean => HELD_STATUSES.includes(order.status)

/**
 * The registered couriers a change of a live order leaves free for another: one whose pending
 * offer it withdrew (a cancel, an operator's assignment), and one who held the order and no longer
 * does (a cancel, a hand-back, a delivery or a return, by whoever made it).
 */
function freedBy(before: Order, after: Order, withdrawn: Offer[]): string[] {
  if (!after.livemode) return []
  const freed = new Set(withdrawn.map((offer) => offer.courierId))
  if (before.courierId && isHeld(before) && !(isHeld(after) && after.courierId === before.courierId)) freed.add(before.courierId)
  // An operator's assignment to the very courier it was offered to withdraws their offer, and binds them.
  if (isHeld(after) && after.courierId) freed.delete(after.courierId)
  return [...freed]
}

/**
 * Who is making a change, read off how it was asked: a cancel names its side; an audited change is
 * an operator's (the CLI, the console, a courier disabled by one handing orders back); a move by
 * the courier holding the order, or their accept of its offer, is the courier's. A business moves
 * an order only through the sandbox (its test orders, by hand or by the sandbox courier), and an
 * unaudited change with the operator's reach is an operator's.
 */
function moverOf(scope: OrderAccess, change: OrderChange, audit: { actor: string } | null): OrderMover {
  if (change.kind === 'cancel') return change.by
  if (audit) return 'operator'
  if (change.offer || (scope !== null && 'courierId' in scope)) return 'courier'
  return scope === null ? 'operator' : 'sandbox'
}

/** The change `by` applied to `order` at `now`, or why it cannot be. Pure: the transaction does the rest. */
function decide(order: Order, change: OrderChange, rates: PlatformRates, now: Date, by: OrderMover): Decision {
  if (change.kind === 'cancel') {
    if (order.status === 'cancelled') return { kind: 'already_there' }
    const move = findMove(order.status, 'cancelled', change.by)
    if (!move) return { kind: 'refused', message: cancelRefusalMessage(order.id, order.status) }
    const terms = cancellationTerms(order, rates, now, change.by)
    const refund = order.price - (terms.fee ?? 0)
    return { kind: 'move', move, refund, next: { ...moved(order, move, change.reason, now, by), courier: null, refundedAmount: refund } }
  }

  if (change.expectedVersion !== undefined && change.expectedVersion !== order.version) {
    return { kind: 'moved_on', message: `${order.id} is at version ${order.version}, not ${change.expectedVersion}` }
  }
  if (change.retry && alreadyThere(order, change)) return { kind: 'already_there' }
  const move = findMove(order.status, change.to, 'dispatch')
  if (!move) return { kind: 'refused', message: illegalMoveMessage(order.id, order.status, change.to) }
  if (move.reasonRequired && !change.reason) return { kind: 'invalid', message: `a reason is required to move ${order.id} to ${change.to}` }
  const next = moved(order, move, change.reason, now, by)
  if (move.to === 'assigned') {
    if (!change.courier) return { kind: 'invalid', message: `a courier is required to move ${order.id} to assigned` }
    // Registered couriers are live (DESIGN 14): a test order keeps the sandbox courier, or one named by hand.
    if (change.courier.id && !order.livemode) return { kind: 'refused', message: `${order.id} is a test order; a registered courier cannot take it` }
    return { kind: 'move', move, refund: 0, next: { ...next, courier: change.courier, courierId: change.courier.id ?? null, assignedAt: now } }
  }
  // Unassigned: no courier holds it, and the next assignment opens a new free window.
  if (move.to === 'created') return { kind: 'move', move, refund: 0, next: { ...next, courier: null, courierId: null, assignedAt: null } }
  if (move.to === 'delivered') return delivered(order, change, { ...next, deliveredLat: change.location?.latitude ?? null, deliveredLng: change.location?.longitude ?? null }, move, now)
  return { kind: 'move', move, refund: 0, next }
}

/** Whether a retried move finds the order where it was to go: at `to`, and for `assigned` with the courier named (a registered one by id, one typed in by name, phone and plate). */
function alreadyThere(order: Order, change: Extract<OrderChange, { kind: 'advance' }>): boolean {
  if (order.status !== change.to) return false
  if (change.to !== 'assigned') return true
  const held = order.courier
  const named = change.courier
  if (!held || !named) return false
  if (named.id || held.id) return named.id === held.id
  return named.name === held.name && named.phone === held.phone && named.vehicle_plate === held.vehicle_plate
}

/**
 * A delivery (DESIGN 14): a courier's needs the order's PIN when it has one (and none after the
 * fifth wrong one) and a photo when the shipment asked for one; an operator's (no `pin` in the
 * change) checks nothing and verifies nothing.
 */
function delivered(order: Order, change: Extract<OrderChange, { kind: 'advance' }>, next: Order, move: Move, now: Date): Decision {
  if (change.pin === undefined) return { kind: 'move', move, refund: 0, next }
  let proven = next
  if (order.deliveryPin !== null) {
    if (order.pinAttempts >= PIN_TRIES) return { kind: 'refused', message: tooManyPins(order.id) }
    if (change.pin === null) return { kind: 'invalid', message: `a PIN is required to deliver ${order.id}`, field: 'pin' }
    if (!samePin(change.pin, order.deliveryPin)) return { kind: 'wrong_pin' }
    proven = { ...next, pinVerifiedAt: now }
  }
  const photo = change.photo ?? null
  if (photoRequired(order) && !photo) return { kind: 'invalid', message: `a photo is required to deliver ${order.id}`, field: 'photo' }
  return { kind: 'move', move, refund: 0, next: { ...proven, photoKey: photo?.key ?? null, photoUrl: photo?.url ?? null } }
}

const tooManyPins = (orderId: string) => `Too many wrong PINs for ${orderId}`

/** Compared in constant time: how long a refusal takes says nothing of how much was right. */
function samePin(given: string, expected: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The order one step on: status, version and history (who moved it included); the caller adds what the move itself changes. */
function moved(order: Order, move: Move, reason: string | null, now: Date, by: OrderMover): Order {
  const step = reason ? { status: move.to, at: now.toISOString(), reason, by } : { status: move.to, at: now.toISOString(), by }
  return { ...order, status: move.to, version: order.version + 1, history: [...order.history, step], updatedAt: now }
}

/** Offers withdrawn (a cancel, an operator's assignment, a courier disabled), counted where they were. */
export function countWithdrawn(offers: number): void {
  if (offers > 0) instruments().dispatchOffers.add(offers, { outcome: 'withdrawn' })
}

function countChange(move: Move, order: Order, refund: number, offersWithdrawn: number): void {
  const metrics = instruments()
  metrics.orderChanges.add(1, { event: move.event, from: move.from, to: move.to })
  countWithdrawn(offersWithdrawn)
  if (refund > 0) {
    metrics.refunds.add(1, { currency: order.currency })
    metrics.refunded.add(toMajor(refund), { currency: order.currency })
  }
}
