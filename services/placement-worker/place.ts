import { findBusiness, type Business } from '../../shared/db/businesses.js'
import { insertOrders, type NewOrder } from '../../shared/db/orders.js'
import { newOrderId } from '../../shared/ids.js'
import { findPlacementShipments, lockPlacement, settlePlacement } from '../../shared/db/placements.js'
import { getPlatformRates } from '../../shared/db/platform-rates.js'
import { loadRateCardForBusiness } from '../../shared/db/rate-cards.js'
import type { Sql } from '../../shared/db/sql.js'
import { debitWalletIfCovered, findWallet, lockWallet } from '../../shared/db/wallets.js'
import { WalletNotCoveredError } from '../../shared/errors/wallet-not-covered-error.js'
import type { LocateTools } from '../../shared/pricing/pipeline.js'
import type { PlatformRates } from '../../shared/courier.js'
import type { PlacementOutcome } from '../../shared/placement/outcome.js'
import type { PlacementJob } from '../../shared/placement-queue.js'
import type { Shipment } from '../../shared/schemas/shipment.js'
import { inSpan, sqlSpan } from '../../shared/telemetry/tracing.js'
import { locateShipments, priceShipments, type LocatedShipment } from './reprice.js'

export interface PlaceDeps extends LocateTools {
  sql: Sql
  currency: string
}

/** A pending placement as the job finds it: whose it is, what it ships, and the rates to measure it by. */
interface Work {
  placementId: string
  business: Business
  shipments: Shipment[]
  rates: PlatformRates
}

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
    const outcome = await settle(deps, work)
    span.setAttribute('courier.outcome', outcome?.kind ?? 'none')
    return outcome
  })
}

/**
 * The job's placement, when it is still pending and belongs to the job's business. The three
 * reads are independent (the job names the business), so they share one wait.
 */
async function loadWork(sql: Sql, job: PlacementJob): Promise<Work | null> {
  const [row, business, rates] = await Promise.all([
    sqlSpan('select placement', () => findPlacementShipments(sql, job.placement_id)),
    sqlSpan('select business', () => findBusiness(sql, job.business_id)),
    sqlSpan('load platform rates', () => getPlatformRates(sql)),
  ])
  if (!row || row.status !== 'pending' || row.businessId !== job.business_id || !business) return null
  return { placementId: job.placement_id, business, shipments: row.shipments, rates }
}

const BALANCE_RETRIES = 5

/**
 * Runs the transaction again when a concurrent debit got in between its balance check and its
 * own debit; the rerun checks afresh, so it either places or stores `insufficient_balance`.
 */
async function settle(deps: PlaceDeps, work: Work): Promise<PlacementOutcome | null> {
  // Geocoding and routing may call out over HTTP: done once, before any row is locked.
  const located = await locateShipments(deps, work.business, work.rates, work.shipments)
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(deps, work, located)
    } catch (err) {
      if (!(err instanceof WalletNotCoveredError) || attempt >= BALANCE_RETRIES) throw err
    }
  }
}

async function settleOnce(deps: PlaceDeps, work: Work, located: LocatedShipment[]): Promise<PlacementOutcome | null> {
  const { sql } = deps
  const { placementId, shipments } = work
  const businessId = work.business.id

  return inSpan('placement.transaction', { 'courier.placement_id': placementId }, () => sql.begin(async (tx) => {
    // Independent reads, pipelined on the transaction's connection: one wait instead of four.
    // The balance is read without the row lock; the debit re-checks it under the lock.
    const [placement, card, rates, wallet] = await Promise.all([
      sqlSpan('lock placement', () => lockPlacement(tx, placementId)),
      sqlSpan('load rate card', () => loadRateCardForBusiness(tx, businessId)),
      sqlSpan('load platform rates', () => getPlatformRates(tx)),
      sqlSpan('read wallet', () => findWallet(tx, businessId)),
    ])
    if (!placement || placement.status !== 'pending') return null

    const { quotes, errors } = priceShipments(located, card, rates, deps.currency)
    if (errors.length > 0) {
      const outcome: PlacementOutcome = { kind: 'unpriceable', errors }
      await sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'failed', outcome))
      return outcome
    }

    const total = quotes.reduce((sum, quote) => sum + quote.price, 0)
    if (!wallet || wallet.balance < total) {
      const outcome: PlacementOutcome = { kind: 'insufficient_balance', currency: deps.currency, required: total, available: wallet?.balance ?? 0 }
      await sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'failed', outcome))
      return outcome
    }

    const orders: NewOrder[] = quotes.map((quote, position) => ({ id: newOrderId(), position, quote, shipment: shipments[position] }))
    const outcome: PlacementOutcome = {
      kind: 'placed',
      currency: deps.currency,
      chargedTotal: total,
      orders: orders.map((order) => ({ orderId: order.id, price: order.quote.price })),
    }
    // One round trip, the wallet last: its row lock, which every placement of the business
    // waits for, is taken by the last statements and held only until the commit that follows.
    await Promise.all([
      sqlSpan('insert orders', () => insertOrders(tx, placementId, businessId, orders)),
      sqlSpan('settle placement', () => settlePlacement(tx, placementId, 'succeeded', outcome)),
      sqlSpan('lock wallet', () => lockWallet(tx, businessId)),
      // Throws when another debit got in since the read: everything rolls back, settle() reruns.
      sqlSpan('debit wallet', () => debitWalletIfCovered(tx, businessId, total, placementId)),
    ])
    return outcome
  }))
}
