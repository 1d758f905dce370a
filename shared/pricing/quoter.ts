import { PricingError } from '../errors/pricing-error.js'
import type { Geocoder } from '../geo/geocoder.js'
import { resolveEnds, type ShipmentEnds } from '../geo/locate.js'
import type { Invalidation } from '../invalidation.js'
import type { Catalog } from '../schemas/catalog.js'
import { buildCatalog } from './catalog.js'
import type { DistanceProvider } from './distance.js'
import { priceShipment } from './engine.js'
import { ExpiringLoads } from './expiring-loads.js'
import type { PlatformRates, Quote, RateCard, VehicleType } from './types.js'

/** What a quote needs besides the card and rates: where the ends are, how far apart, in what money. */
export interface QuoteTools {
  geocoder: Geocoder
  distance: DistanceProvider
  currency: string
}

/** A quote request or a shipment, in the API's field names; `weight` is the billable weight. */
export interface QuoteInput extends ShipmentEnds {
  weight: number
  vehicle_type?: VehicleType
  option_id?: string
}

/**
 * Places the ends, measures the distance and prices, with a card and rates the caller already
 * holds: the placement worker passes the card it read inside its own transaction.
 */
export async function quoteWith(input: QuoteInput, card: RateCard | null, rates: PlatformRates, tools: QuoteTools): Promise<Quote> {
  // Fail before geocoding: an account without a card gets the same answer whatever the address.
  if (input.vehicle_type !== undefined && !card) throw new PricingError('No rate card is enabled for this account')
  const ends = await resolveEnds(input, tools.geocoder)
  const distanceKm = await tools.distance.measure(ends.pickup, ends.dropoff, rates.roadFactor)
  return priceShipment({ ...ends, weight: input.weight, vehicleType: input.vehicle_type, optionId: input.option_id }, distanceKm, card, rates, tools.currency)
}

/** Where the quoter reads from on a cache miss. */
export interface QuoteSources {
  loadCardForBusiness(businessId: string): Promise<RateCard | null>
  loadPlatformRates(): Promise<PlatformRates>
}

export interface Quoter {
  quote(businessId: string, input: QuoteInput): Promise<Quote>
  catalog(businessId: string): Promise<Catalog>
  /** Applies one invalidation message (see shared/invalidation.ts). */
  invalidate(message: Invalidation): void
  /** Drops everything, e.g. after the invalidation channel reconnected and may have missed messages. */
  reset(): void
}

/**
 * Quotes with the business's card and the platform rates held in memory, so a quote in steady
 * state makes no database round trip. Invalidation messages drop entries at once; the TTL is
 * the backstop for a lost message.
 */
export function createQuoter(sources: QuoteSources, tools: QuoteTools, ttlMs: number): Quoter {
  const cards = new ExpiringLoads<string, RateCard | null>(ttlMs)
  const rates = new ExpiringLoads<'rates', PlatformRates>(ttlMs)
  const cardFor = (businessId: string) => cards.get(businessId, () => sources.loadCardForBusiness(businessId))
  const currentRates = () => rates.get('rates', () => sources.loadPlatformRates())

  return {
    async quote(businessId, input) {
      const [card, platformRates] = await Promise.all([cardFor(businessId), currentRates()])
      return quoteWith(input, card, platformRates, tools)
    },
    async catalog(businessId) {
      return buildCatalog(await cardFor(businessId), tools.currency)
    },
    invalidate(message) {
      if (message.kind === 'business') cards.delete(message.businessId)
      // A card in flight has no id yet, so it may be the one that changed: drop it too.
      else if (message.kind === 'rate-card') cards.deleteWhere((card) => card === undefined || card?.rateCardId === message.rateCardId)
      else if (message.kind === 'platform-rates') rates.clear()
    },
    reset() {
      cards.clear()
      rates.clear()
    },
  }
}
