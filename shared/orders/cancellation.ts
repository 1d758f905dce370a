import type { OrderStatus, PlatformRates } from '../courier.js'

/** What cancelling would cost at one moment, in kobo: the `cancellation` block of every order read. */
export interface CancellationTerms {
  cancellable: boolean
  /** Null when the order cannot be cancelled. */
  fee: number | null
  /** Set only while the order is assigned: the end of the business's free window. */
  freeUntil: Date | null
}

type Cancellable = { status: OrderStatus; price: number; assignedAt: Date | null }

const NOT_CANCELLABLE: CancellationTerms = { cancellable: false, fee: null, freeUntil: null }

/**
 * The terms of a cancel by `actor` at `now`. The business cancels free while the order is
 * `created` and, once assigned, until `cancelFreeWindowS` after the latest assignment; after
 * that the fee is `cancellationFeePercent` of the price. The operator always cancels free. From
 * `picked_up` on nobody can cancel (docs/contracts.md section 6).
 */
export function cancellationTerms(order: Cancellable, rates: PlatformRates, now: Date, actor: 'business' | 'operator'): CancellationTerms {
  if (order.status === 'created') return { cancellable: true, fee: 0, freeUntil: null }
  if (order.status !== 'assigned' || order.assignedAt === null) return NOT_CANCELLABLE
  const freeUntil = new Date(order.assignedAt.getTime() + rates.cancelFreeWindowS * 1000)
  const free = actor === 'operator' || now < freeUntil
  return { cancellable: true, fee: free ? 0 : cancellationFee(order.price, rates.cancellationFeePercent), freeUntil }
}

/**
 * `percent` of `price` kobo, rounded half away from zero to the kobo. Exact in integers: the
 * percent has at most two decimals, so it is a whole number of basis points, and the product
 * is taken in BigInt, as a price may reach 10^15 kobo.
 */
export function cancellationFee(price: number, percent: number): number {
  const basisPoints = BigInt(Math.round(percent * 100))
  return Number((BigInt(price) * basisPoints + 5000n) / 10000n)
}

const CANCEL_REFUSALS: Partial<Record<OrderStatus, string>> = {
  picked_up: 'it was picked up',
  delivered: 'it is delivered',
  failed: 'it failed',
  returned: 'it was returned',
}

/** Why an order in `status` can no longer be cancelled, as both the API and the CLI answer. */
export function cancelRefusalMessage(orderId: string, status: OrderStatus): string {
  return `${orderId} can no longer be cancelled: ${CANCEL_REFUSALS[status] ?? `it is ${status}`}`
}
