import { LoadCache } from '../cache.js'
import type { Invalidation } from '../invalidation.js'
import type { Catalog } from '../schemas/catalog.js'
import { buildCatalog } from './catalog.js'
import { locateForPricing, priceLocated, type LocateTools, type Located, type QuoteInput } from './pipeline.js'
import type { PlatformRates, Quote, RateCard } from '../courier.js'

/** What a quote needs besides the card and rates: where the ends are, how far apart, in what money. */
export interface QuoteTools extends LocateTools {
  currency: string
}

export type { QuoteInput }

/** A quote and the ends it was priced between: a held quote keeps both. */
export interface Priced {
  quote: Quote
  located: Located
}

/**
 * Locates and prices with a card and rates the caller already holds, through the same two
 * steps the placement worker runs on each shipment, so both refuse alike (docs/contracts.md).
 */
export async function quoteWith(input: QuoteInput, card: RateCard | null, rates: PlatformRates, tools: QuoteTools): Promise<Priced> {
  const located = await locateForPricing(input, { hasCard: card !== null, roadFactor: rates.roadFactor }, tools)
  return { quote: priceLocated(input, located, card, rates, tools.currency), located }
}

/** Where the quoter reads from on a cache miss. */
export interface QuoteSources {
  loadCardForBusiness(businessId: string): Promise<RateCard | null>
  loadPlatformRates(): Promise<PlatformRates>
}

export interface Quoter {
  quote(businessId: string, input: QuoteInput): Promise<Priced>
  catalog(businessId: string): Promise<Catalog>
  /** Applies one invalidation message (see shared/invalidation.ts). */
  invalidate(message: Invalidation): void
  /** Drops everything, e.g. after the invalidation channel reconnected and may have missed messages. */
  reset(): void
}

/**
 * Quotes with the business's card and the platform rates held in memory, so a quote in steady
 * state makes no database round trip. Invalidation messages drop entries at once; the TTL is
 * the backstop for a lost message. Cards are keyed by the caller's business id, so at most
 * `maxCards` are held.
 */
export function createQuoter(sources: QuoteSources, tools: QuoteTools, ttlMs: number, maxCards = 10_000): Quoter {
  const cards = new LoadCache<string, RateCard | null>({ max: maxCards, ttlMs })
  const rates = new LoadCache<'rates', PlatformRates>({ max: 1, ttlMs })
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
