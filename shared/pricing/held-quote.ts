import type { Point, Quote, VehicleType } from '../courier.js'
import { PricingError } from '../errors/pricing-error.js'
import { toMajor } from '../money.js'
import { haversineKm } from './distance.js'
import { newQuoteId } from '../ids.js'
import type { Located, QuoteInput } from './pipeline.js'
import type { HeldQuote } from './quote-store.js'

/** Both ends of a shipment must lie this close to the quote's (docs/contracts.md). */
const SAME_POINT_KM = 0.05

/** A fresh quote as it will be held: `ttlS` from `now`, under a new `qt_` id. */
export function toHeldQuote(caller: { businessId: string; livemode: boolean }, input: QuoteInput, priced: { quote: Quote; located: Located }, now: Date, ttlS: number): HeldQuote {
  return {
    id: newQuoteId(),
    businessId: caller.businessId,
    livemode: caller.livemode,
    vehicleType: input.vehicle_type ?? null,
    optionId: input.option_id ?? null,
    weight: input.weight,
    pickup: priced.located.pickup,
    dropoff: priced.located.dropoff,
    quote: priced.quote,
    expiresAt: new Date(now.getTime() + ttlS * 1000).toISOString(),
  }
}

/** What a shipment asks of a held quote: its own request, as the quote was asked, and its resolved ends. */
export interface QuoteClaim {
  index: number
  quoteId: string
  businessId: string
  livemode: boolean
  vehicleType: VehicleType | null
  optionId: string | null
  weight: number
  pickup: Point
  dropoff: Point
}

/**
 * The price a shipment that names a quote is charged: the quote's, when it exists, is the
 * caller's, has not expired at `now` (the transaction's clock) and matches the shipment. A
 * valid quote wins over a card changed since, its option id included. Otherwise the shipment
 * fails with the reason, prefixed `[i].quote_id`. Pure: the worker fetched `held` before its
 * transaction.
 */
export function chargeHeldQuote(claim: QuoteClaim, held: HeldQuote | undefined, now: Date): Quote {
  const prefix = `[${claim.index}].quote_id ${claim.quoteId}`
  if (!held || held.businessId !== claim.businessId || held.livemode !== claim.livemode) throw new PricingError(`${prefix} is unknown`)
  if (now.getTime() >= Date.parse(held.expiresAt)) throw new PricingError(`${prefix} has expired; request a new quote`)
  const differs = mismatch(claim, held)
  if (differs) throw new PricingError(`${prefix} does not match this shipment: ${differs} differs`)
  return held.quote
}

/** The first thing that differs between the shipment and its quote, in the contract's order. */
function mismatch(claim: QuoteClaim, held: HeldQuote): string | null {
  if (claim.vehicleType !== held.vehicleType) return 'vehicle_type'
  if (claim.optionId !== held.optionId) return 'option_id'
  if (claim.weight !== held.weight) return 'weight'
  if (haversineKm(claim.pickup, held.pickup) > SAME_POINT_KM) return 'pickup point'
  if (haversineKm(claim.dropoff, held.dropoff) > SAME_POINT_KM) return 'dropoff point'
  return null
}

/**
 * Refuses a price above the shipment's `max_price` (major units, any decimals), naming both. The
 * price in major units is compared, not the limit in kobo: dividing by 100 is rounded correctly, so
 * a price equal to its limit is that very number, and a limit is never rounded up past itself.
 */
export function checkMaxPrice(index: number, price: number, maxPrice: number | undefined): void {
  if (maxPrice === undefined || toMajor(price) <= maxPrice) return
  throw new PricingError(`[${index}].price ${toMajor(price)} exceeds max_price ${maxPrice}`)
}
