import type { Catalog } from '../schemas/catalog.js'
import { DELIVERY_MODES, VEHICLE_TYPES, type RateCard } from '../courier.js'

/**
 * What a business may send as `vehicle_type` and `option_id` right now. Vehicle types without
 * an option are left out so a client never offers a choice that can only fail.
 */
export function buildCatalog(card: RateCard | null, currency: string): Catalog {
  if (!card) return { currency, rate_card_id: null, version: null, updated_at: null, rate_cards: [], zones: [] }
  const groups = VEHICLE_TYPES.map((vehicleType) => {
    const options = card.options.filter((option) => option.vehicleType === vehicleType)
    // Bike bands read best lightest first; other options keep the card's order.
    if (vehicleType === 'bike') options.sort((a, b) => (a.minWeightKg ?? 0) - (b.minWeightKg ?? 0))
    return {
      vehicle_type: vehicleType,
      delivery_mode: DELIVERY_MODES[vehicleType],
      options: options.map((option) => ({ id: option.id, label: option.label, min_weight_kg: option.minWeightKg, max_weight_kg: option.maxWeightKg })),
    }
  }).filter((group) => group.options.length > 0)
  return {
    currency,
    rate_card_id: card.rateCardId,
    version: card.version,
    updated_at: card.updatedAt.toISOString(),
    rate_cards: groups,
    zones: card.zones.map((zone) => zone.name),
  }
}
