import type { Business } from '../../shared/db/businesses.js'
import { PricingError } from '../../shared/errors/pricing-error.js'
import { chargeHeldQuote, checkMaxPrice } from '../../shared/pricing/held-quote.js'
import type { HeldQuote } from '../../shared/pricing/quote-store.js'
import { billableWeight, locateForPricing, priceLocated, type LocateTools, type Located, type QuoteInput } from '../../shared/pricing/pipeline.js'
import type { PlatformRates, Quote, RateCard } from '../../shared/courier.js'
import type { Shipment } from '../../shared/schemas/shipment.js'

/** A shipment the placement cannot price, at its index in the request. */
export interface ShipmentRefusal {
  index: number
  message: string
}

/** A shipment located before the transaction, or the refusal its locating gave. */
export type LocatedShipment = { shipment: Shipment; input: QuoteInput } & ({ located: Located } | { error: string })

/**
 * The placement's half of the quote pipeline that runs before the transaction: geocoding and
 * routing may call out over HTTP, so no row is locked meanwhile. The road factor is read before
 * the transaction; pricing uses the rates read inside it, so a change in between prices with the
 * new rates over a distance measured with the old factor, which is acceptable for a change that
 * races a placement. `hasCard` comes from the business row: a card disabled in between is still
 * refused inside, by the engine's own "no card" check.
 */
export async function locateShipments(tools: LocateTools, business: Business, roadFactor: number, shipments: Shipment[]): Promise<LocatedShipment[]> {
  const facts = { hasCard: business.rateCardId !== null, roadFactor }
  return Promise.all(
    shipments.map(async (shipment, index) => {
      const input = shipmentInput(business, shipment)
      try {
        return { shipment, input, located: await locateForPricing(input, facts, tools) }
      } catch (err) {
        if (err instanceof PricingError) return { shipment, input, error: batchMessage(err, index) }
        throw err
      }
    }),
  )
}

/** What pricing inside the transaction reads there: the card, the rates, the clock, and the held quotes fetched just before. */
export interface PricingContext {
  card: RateCard | null
  rates: PlatformRates
  currency: string
  caller: { businessId: string; livemode: boolean }
  held: Map<string, HeldQuote>
  now: Date
}

/**
 * The half inside the transaction: a shipment that names a quote is charged the quote's price
 * if the quote still holds for it; any other is priced with the card and rates read there.
 * Then `max_price`, last in the refusal order.
 */
export function priceShipments(shipments: LocatedShipment[], context: PricingContext): { quotes: Quote[]; errors: ShipmentRefusal[] } {
  const { card, rates, currency, caller, held, now } = context
  const quotes: Quote[] = []
  const errors: ShipmentRefusal[] = []
  for (const [index, entry] of shipments.entries()) {
    if ('error' in entry) {
      errors.push({ index, message: entry.error })
      continue
    }
    const { shipment, input, located } = entry
    try {
      const quote = shipment.quote_id === undefined
        ? priceLocated(input, located, card, rates, currency)
        : chargeHeldQuote({
          index, quoteId: shipment.quote_id, ...caller,
          vehicleType: input.vehicle_type ?? null, optionId: input.option_id ?? null, weight: input.weight,
          pickup: located.pickup, dropoff: located.dropoff,
        }, held.get(shipment.quote_id), now)
      checkMaxPrice(index, quote.price, shipment.max_price)
      quotes.push(quote)
    } catch (err) {
      if (!(err instanceof PricingError)) throw err
      errors.push({ index, message: batchMessage(err, index) })
    }
  }
  return { quotes, errors }
}

/** A shipment's pricing refusal in a batch: one about a field starts with `[i].` (DESIGN 13.9); the rest stand as they are, `index` beside them. */
function batchMessage(err: PricingError, index: number): string {
  return err.field === null ? err.message : `[${index}].${err.message}`
}

/** A shipment as a quote input: without its own pickup address it leaves from the business, at its pinned point if it has one. */
function shipmentInput(business: Business, shipment: Shipment): QuoteInput {
  const fromBusiness = shipment.pickup_address === undefined
  const businessPinned = fromBusiness && business.latitude !== null && business.longitude !== null
  return {
    pickup_address: shipment.pickup_address ?? business.address,
    pickup_state: shipment.pickup_state ?? (fromBusiness ? business.state : undefined),
    dropoff_address: shipment.dropoff_address,
    dropoff_state: shipment.dropoff_state,
    pickup_latitude: shipment.pickup_latitude ?? (businessPinned ? business.latitude! : undefined),
    pickup_longitude: shipment.pickup_longitude ?? (businessPinned ? business.longitude! : undefined),
    dropoff_latitude: shipment.dropoff_latitude,
    dropoff_longitude: shipment.dropoff_longitude,
    weight: billableWeight(shipment.weight, shipment.quantity),
    vehicle_type: shipment.vehicle_type,
    option_id: shipment.option_id,
  }
}
