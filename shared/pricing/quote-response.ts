import { toMajor } from '../money.js'
import type { QuoteResponse } from '../schemas/quote.js'
import type { Quote } from '../courier.js'
import type { HeldQuote } from './quote-store.js'

/**
 * The quote as the API shows it: snake_case, major units, option and zone fields null under
 * distance pricing; `quote_id` and `expires_at` null when the quote could not be held.
 */
export function toQuoteResponse(quote: Quote, held: Pick<HeldQuote, 'id' | 'expiresAt'> | null): QuoteResponse {
  return {
    price: toMajor(quote.price),
    distance_km: quote.distanceKm,
    currency: quote.currency,
    pricing_model: quote.pricingModel,
    option_id: quote.optionId,
    option_label: quote.optionLabel,
    delivery_mode: quote.deliveryMode,
    from_zone_name: quote.fromZoneName,
    to_zone_name: quote.toZoneName,
    quote_id: held?.id ?? null,
    expires_at: held?.expiresAt ?? null,
  }
}
