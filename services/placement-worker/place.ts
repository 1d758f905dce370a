import { findBusiness } from '../../shared/db/businesses.js'
import { insertOrders, newOrderId, type NewOrder } from '../../shared/db/orders.js'
import { lockPlacement, settlePlacement, type PlacementOutcome } from '../../shared/db/placements.js'
import { getPlatformRates } from '../../shared/db/platform-rates.js'
import { loadRateCardForBusiness } from '../../shared/db/rate-cards.js'
import type { Sql } from '../../shared/db/sql.js'
import { debitWalletIfCovered, findWallet, lockWallet } from '../../shared/db/wallets.js'
import { WalletNotCoveredError } from '../../shared/errors/wallet-not-covered-error.js'
import { toMajor } from '../../shared/money.js'
import type { LocateTools } from '../../shared/pricing/pipeline.js'
import type { PlacementJob } from '../../shared/placement-queue.js'
import { inSpan, sqlSpan } from '../../shared/telemetry/tracing.js'
import { locateShipments, priceShipments } from './reprice.js'

export interface PlaceDeps extends LocateTools {
  sql: Sql
  currency: string
}

/** The answer for a job whose placement row is gone: the gateway already gave up on it. */
const DISCARDED: PlacementOutcome = { statusCode: 410, body: { message: 'Placement was discarded before it ran' } }

/**
 * Settles one placement in one transaction: re-quote every shipment, check and debit the
 * wallet, insert the orders, store the outcome. The placement row is locked first, so a job
 * that BullMQ runs twice finds the stored outcome and moves no money the second time.
 * Domain failures are returned and stored; only faults throw, to be retried.
 */
export function place(deps: PlaceDeps, job: PlacementJob): Promise<PlacementOutcome> {
  const attributes = { 'courier.business_id': job.businessId, 'courier.placement_id': job.placementId, 'courier.shipments': job.shipments.length }
  return inSpan('placement.place', attributes, async (span) => {
    const outcome = await settle(deps, job)
    span.setAttribute('courier.outcome_status', outcome.statusCode)
    return outcome
  })
}

const BALANCE_RETRIES = 5

/**
 * Runs the transaction again when a concurrent debit got in between its balance check and its
 * own debit; the rerun checks afresh, so it either places or stores `Insufficient wallet balance`.
 */
async function settle(deps: PlaceDeps, job: PlacementJob): Promise<PlacementOutcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await settleOnce(deps, job)
    } catch (err) {
      if (!(err instanceof WalletNotCoveredError) || attempt >= BALANCE_RETRIES) throw err
    }
  }
}

async function settleOnce(deps: PlaceDeps, job: PlacementJob): Promise<PlacementOutcome> {
  const { sql } = deps
  const [business, ratesBefore] = await Promise.all([
    sqlSpan('select business', () => findBusiness(sql, job.businessId)),
    sqlSpan('load platform rates', () => getPlatformRates(sql)),
  ])
  if (!business) return DISCARDED
  // Geocoding and routing may call out over HTTP: done before any row is locked.
  const located = await locateShipments(deps, business, ratesBefore, job.shipments)

  return inSpan('placement.transaction', { 'courier.placement_id': job.placementId }, () => sql.begin(async (tx) => {
    // Independent reads, pipelined on the transaction's connection: one wait instead of four.
    // The balance is read without the row lock; the debit re-checks it under the lock.
    const [placement, card, rates, wallet] = await Promise.all([
      sqlSpan('lock placement', () => lockPlacement(tx, job.placementId)),
      sqlSpan('load rate card', () => loadRateCardForBusiness(tx, job.businessId)),
      sqlSpan('load platform rates', () => getPlatformRates(tx)),
      sqlSpan('read wallet', () => findWallet(tx, job.businessId)),
    ])
    if (!placement) return DISCARDED
    if (placement.outcome) return placement.outcome

    const { quotes, errors } = priceShipments(located, card, rates, deps.currency)
    if (errors.length > 0) {
      const outcome = { statusCode: 400, body: { message: 'One or more orders could not be placed', errors } }
      await sqlSpan('settle placement', () => settlePlacement(tx, job.placementId, 'failed', outcome))
      return outcome
    }

    const total = quotes.reduce((sum, quote) => sum + quote.price, 0)
    if (!wallet || wallet.balance < total) {
      const outcome = {
        statusCode: 400,
        body: { message: 'Insufficient wallet balance', required: toMajor(total), available: toMajor(wallet?.balance ?? 0), currency: deps.currency },
      }
      await sqlSpan('settle placement', () => settlePlacement(tx, job.placementId, 'failed', outcome))
      return outcome
    }

    const orders: NewOrder[] = quotes.map((quote, position) => ({ id: newOrderId(), position, quote, shipment: job.shipments[position] }))
    const count = orders.length
    const outcome = {
      statusCode: 201,
      body: {
        status: 'Success',
        description: `${count} ${count === 1 ? 'order' : 'orders'} placed`,
        currency: deps.currency,
        charged_total: toMajor(total),
        orders: orders.map((order) => ({ order_id: order.id, price: toMajor(order.quote.price) })),
        placement_id: job.placementId,
      },
    }
    // One round trip, the wallet last: its row lock, which every placement of the business
    // waits for, is taken by the last statements and held only until the commit that follows.
    await Promise.all([
      sqlSpan('insert orders', () => insertOrders(tx, job.placementId, job.businessId, orders)),
      sqlSpan('settle placement', () => settlePlacement(tx, job.placementId, 'succeeded', outcome)),
      sqlSpan('lock wallet', () => lockWallet(tx, job.businessId)),
      // Throws when another debit got in since the read: everything rolls back, settle() reruns.
      sqlSpan('debit wallet', () => debitWalletIfCovered(tx, job.businessId, total, job.placementId)),
    ])
    return outcome
  }))
}
