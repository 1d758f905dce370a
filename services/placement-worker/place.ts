import { appendEvents } from '../../shared/db/events.js'
import { insertOrders, type Order, type OrderBatch, type StoredShipment } from '../../shared/db/orders.js'
import { newDeliveryPin, newEventId, newOrderId, newTrackingToken } from '../../shared/ids.js'
import { orderAsShown } from '../../shared/orders/resource.js'
import { findPlacementWork, openPlacement, settlePlacement, type PlacementWork } from '../../shared/db/placements.js'
import { pipelined } from '../../shared/db/pipelined.js'
import type { Sql } from '../../shared/db/sql.js'
import { debitWalletIfCovered } from '../../shared/db/wallets.js'
import { WalletNotCoveredError } from '../../shared/errors/wallet-not-covered-error.js'
import type { LocateTools } from '../../shared/pricing/pipeline.js'
import type { HeldQuote, QuoteStore } from '../../shared/pricing/quote-store.js'
import type { CardVersions } from '../../shared/pricing/card-versions.js'
import { VEHICLE_OF_MODE, type Quote } from '../../shared/courier.js'
import type { PlacementOutcome } from '../../shared/placement/outcome.js'
import type { PlacementJob } from '../../shared/placement-queue.js'
import { activeTraceparent, inSpan, sqlSpan } from '../../shared/telemetry/tracing.js'
import { locateShipments, priceShipments, type LocatedShipment } from './reprice.js'

export interface PlaceDeps extends LocateTools {
  sql: Sql
  currency: string
  quotes: QuoteStore
  /** Rate cards by version: the transaction reads which version is in force, the card comes from memory. */
  cards: CardVersions
  /** Hands new test orders to the sandbox courier, after the commit; its sweep covers a failure. */
  startSandboxOrders: (orders: Order[]) => Promise<void>
  /** Asks the dispatcher to offer new live orders, after the commit; its sweep covers a failure. */
  offerOrders: (orderIds: string[]) => Promise<void>
  /** Where recipients open tracking pages: each order's link is `<this>/t/<token>`. */
  trackingBaseUrl: string
}

/** What one transaction settled: the outcome stored, and the orders it created (none unless placed). */
interface Settled {
  outcome: PlacementOutcome
  orders: Order[]
}

/** A pending placement as the job finds it: whose it is, what it ships, and the road factor to measure it by. */
type Work = Omit<PlacementWork, 'status'> & { placementId: string }

/**
 * Settles one placement in one transaction: re-quote every shipment, check and debit the
 * wallet, insert the orders, store the outcome. The placement row is locked first and the job
 * acts only while it is pending, so a job that BullMQ runs twice, or one that arrives after
 * the row was settled `not_processed`, moves no money. Null: this run settled nothing (the row
 * is unknown, another business's, or already settled). Domain failures are stored outcomes;
 * only faults throw, to be retried.
 */
export function place(deps: PlaceDeps, job: PlacementJob): Promise<PlacementOutcome | null> {
  const attributes = { 'courier.business_id': job.business_id, 'courier.placement_id': job.placement_id }
  return inSpan('placement.place', attributes, async (span) => {
    const work = await loadWork(deps.sql, job)
    if (!work) return null
    span.setAttribute('courier.shipments', work.shipments.length)
    const settled = await settle(deps, work)
    span.setAttribute('courier.outcome', settled?.outcome.kind ?? 'none')
    if (settled && settled.orders.length > 0) {
      if (work.livemode) await deps.offerOrders(settled.orders.map((order) => order.id))
      else await deps.startSandboxOrders(settled.orders)
    }
    return settled?.outcome ?? null
  })
}

/** The job's placement, when it is still pending and belongs to the job's business. */
async function loadWork(sql: Sql, job: PlacementJob): Promise<Work | null> {
  const row = await sqlSpan('select placement', () => findPlacementWork(sql, job.placement_id, job.business_id))
  if (!row || row.status !== 'pending') return null
  const { status: _pending, ...work } = row
  return { placementId: job.placement_id, ...work }
}

const BALANCE_RETRIES = 5

/**
 * Runs the transaction again when a concurrent debit got in between its balance check and its
 * own debit; the rerun checks afresh, so it either places or stores `insufficient_balance`.
 */
async function settle(deps: PlaceDeps, work: Work): Promise<Settled | null> {
  // Geocoding and routing may call out over HTTP: done once, before any row is locked.
  const located = await locateShipments(deps, work.business, work.roadFactor, work.shipments)
  // The quotes shipments name, read once from Redis; whether each still holds is decided
  // inside the transaction, by its clock.
  const quoteIds = [...new Set(work.shipments.flatMap((shipment) => (shipment.quote_id === undefined ? [] : [shipment.quote_id])))]
  const held = await deps.quotes.find(quoteIds)
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(deps, work, located, held)
    } catch (err) {
      if (!(err instanceof WalletNotCoveredError) || attempt >= BALANCE_RETRIES) throw err
    }
  }
}

async function settleOnce(deps: PlaceDeps, work: Work, located: LocatedShipment[], held: Map<string, HeldQuote>): Promise<Settled | null> {
  const { sql } = deps
  const { placementId } = work
  const businessId = work.business.id

  return inSpan('placement.transaction', { 'courier.placement_id': placementId }, () => pipelined<Settled | null>(sql, async (tx, commit) => {
    // One statement locks the placement and reads the card version, the rates, the balance and
    // the clock. The balance is read without the wallet's lock; the debit re-checks it under it.
    const caller = { businessId, livemode: work.livemode }
    const opened = await sqlSpan('lock placement', () => openPlacement(tx, placementId, caller))
    if (!opened || opened.status !== 'pending') return null
    const { rates, walletBalance, now } = opened
    const card = await deps.cards.get(opened.card)

    const { quotes, errors } = priceShipments(located, { card, rates, currency: deps.currency, caller, held, now })
    if (errors.length > 0) {
      const outcome: PlacementOutcome = { kind: 'unpriceable', errors }
      return commit([sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'failed', outcome))], () => ({ outcome, orders: [] }))
    }

    const total = quotes.reduce((sum, quote) => sum + quote.price, 0)
    if (walletBalance === null || walletBalance < total) {
      const outcome: PlacementOutcome = { kind: 'insufficient_balance', currency: deps.currency, required: total, available: walletBalance ?? 0 }
      return commit([sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'failed', outcome))], () => ({ outcome, orders: [] }))
    }

    // What the orders share is written once: the batch, beside each order's own line.
    const batch: OrderBatch = { placementId, businessId, livemode: work.livemode, currency: deps.currency, history: [{ status: 'created', at: now.toISOString() }], createdAt: now }
    const orders = quotes.map((quote, position) => newOrder(work, batch, position, located[position]!, quote, deps.trackingBaseUrl))
    const outcome: PlacementOutcome = {
      kind: 'placed',
      currency: deps.currency,
      chargedTotal: total,
      orders: orders.map((order) => ({ orderId: order.id, price: order.price })),
    }
    // One `order.created` event per order, numbered in the placement's order.
    const events = orders.map((order) => ({
      id: newEventId(), type: 'order.created' as const, orderId: order.id, orderVersion: 1, createdAt: now,
      data: { order: orderAsShown(order, rates, now) },
    }))
    // One round trip with the COMMIT, in the lock order (placement, event counter, wallet): the
    // counter's and the wallet's row locks, which every placement of the business waits for,
    // are not held while this process reads the answers.
    return commit([
      sqlSpan('insert orders', () => insertOrders(tx, batch, orders)),
      sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'succeeded', outcome)),
      sqlSpan('append events', () => appendEvents(tx, caller, events, activeTraceparent())),
      // Fails when another debit got in since the read: everything rolls back, settle() reruns.
      sqlSpan('debit wallet', () => debitWalletIfCovered(tx, businessId, total, placementId, work.livemode)),
    ], () => ({ outcome, orders }))
  }))
}

/**
 * The order a priced shipment becomes: `created`, version 1, the shipment as sent with its
 * pickup and sender resolved from the business, and what the quote decided.
 */
function newOrder(work: Work, batch: OrderBatch, position: number, located: LocatedShipment, quote: Quote, trackingBaseUrl: string): Order {
  const trackingToken = newTrackingToken()
  const sent = work.shipments[position]!
  const { input } = located
  // Priced, so located: the ends dispatch searches around and the ETA runs to.
  const ends = 'located' in located ? located.located : null
  // The spec's defaults, resolved once here: the pickup and the sender are the business's own.
  // A live order keeps no sandbox scenario. Copied, then completed: V8 builds
  // `{ ...sent, <more fields> }` through a slow path, much dearer (docs/performance.md).
  const shipment: StoredShipment = Object.assign({}, sent)
  if (work.livemode) delete shipment.sandbox_scenario
  shipment.pickup_address = input.pickup_address
  // The spec's default whenever it is omitted; an address of another place is still located from its own text (reprice.ts).
  shipment.pickup_state = sent.pickup_state ?? work.business.state
  shipment.sender_name = sent.sender_name ?? work.business.name
  shipment.sender_phone = sent.sender_phone ?? work.business.phone
  // Every field named, in one literal: V8 builds `{ ...batch, <19 more fields> }` through a
  // slow path, which would be a large share of the worker's time per order (docs/performance.md).
  return {
    id: newOrderId(),
    placementId: batch.placementId,
    businessId: batch.businessId,
    livemode: batch.livemode,
    position,
    status: 'created',
    version: 1,
    price: quote.price,
    currency: batch.currency,
    pricingModel: quote.pricingModel,
    vehicleType: VEHICLE_OF_MODE[quote.deliveryMode],
    optionId: quote.optionId,
    optionLabel: quote.optionLabel,
    deliveryMode: quote.deliveryMode,
    distanceKm: quote.distanceKm,
    fromZoneName: quote.fromZoneName,
    toZoneName: quote.toZoneName,
    shipment,
    courier: null,
    courierId: null,
    pickupLat: ends?.pickup.lat ?? null,
    pickupLng: ends?.pickup.lng ?? null,
    dropoffLat: ends?.dropoff.lat ?? null,
    dropoffLng: ends?.dropoff.lng ?? null,
    deliveryPin: sent.proof?.pin ? newDeliveryPin() : null,
    pinAttempts: 0,
    pinVerifiedAt: null,
    deliveredLat: null,
    deliveredLng: null,
    photoKey: null,
    photoUrl: null,
    trackingUrl: `${trackingBaseUrl}/t/${trackingToken}`,
    trackingToken,
    history: batch.history,
    assignedAt: null,
    refundedAmount: 0,
    createdAt: batch.createdAt,
    updatedAt: batch.createdAt,
  }
}
