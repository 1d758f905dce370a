import { PricingError } from '../errors/pricing-error.js'
import { MAX_EXACT_KOBO, roundHalfAwayFromZero } from '../money.js'
import { selectBikeBand } from './bands.js'
import { zoneOf } from './zones.js'
import { DELIVERY_MODES, priceKey, type DeliveryMode, type PlatformRates, type PricingRequest, type Quote, type RateCard, type RateOption, type VehicleType } from '../courier.js'

/**
 * Prices one shipment whose ends are already placed and measured. Pure: the caller brings the
 * card (or null), the platform rates and the distance, so the pricing service and the placement
 * worker (reading the card inside its own transaction) charge by the same rules.
 * Throws `PricingError` with the message the integrator sees.
 */
export function priceShipment(request: PricingRequest, distanceKm: number, card: RateCard | null, rates: PlatformRates, currency: string): Quote {
  checkOptionRules(request)
  const quote = request.vehicleType === undefined ? priceByDistance(request.weight, distanceKm, rates, currency) : priceByRateCard(request, request.vehicleType, distanceKm, card, currency)
  // Local means local: checked last (docs/contracts.md), so a trip with other faults reports those first.
  if (distanceKm > rates.maxDistanceKm) throw new PricingError(`distance ${distanceKm.toFixed(2)} km exceeds the ${rates.maxDistanceKm} km limit of local delivery`)
  return quote
}

/** The option rules that need no card, refused before the card and the addresses are looked at. */
export function checkOptionRules(request: Pick<PricingRequest, 'vehicleType' | 'optionId'>): void {
  const { vehicleType, optionId } = request
  if (vehicleType === undefined) {
    if (optionId !== undefined) throw new PricingError('vehicle_type is required when option_id is sent', 'vehicle_type')
  } else if (vehicleType === 'bike') {
    if (optionId !== undefined) throw new PricingError('option_id must be omitted for bike; the band is chosen by weight', 'option_id')
  } else if (optionId === undefined) throw new PricingError(`option_id is required when vehicle_type is ${vehicleType}`, 'option_id')
}

function priceByRateCard(request: PricingRequest, vehicleType: VehicleType, distanceKm: number, card: RateCard | null, currency: string): Quote {
  if (!card) throw new PricingError('No rate card is enabled for this account')
  // The importer refuses foreign currencies; this guards a deployment whose CURRENCY changed later.
  if (card.currency !== currency) throw new PricingError(`Your rate card is in ${card.currency} but this service charges in ${currency}`)
  const option = chooseOption(card, request, vehicleType)
  const from = zoneOf(card.zones, request.pickup, 'pickup')
  const to = zoneOf(card.zones, request.dropoff, 'dropoff')
  const price = option.prices.get(priceKey(from.name, to.name))
  if (price === undefined) throw new PricingError(`${option.label} has no price from ${from.name} to ${to.name}`)
  return {
    price,
    distanceKm,
    currency,
    pricingModel: 'rate_card',
    optionId: option.id,
    optionLabel: option.label,
    deliveryMode: DELIVERY_MODES[vehicleType],
    fromZoneName: from.name,
    toZoneName: to.name,
  }
}

function chooseOption(card: RateCard, request: PricingRequest, vehicleType: VehicleType): RateOption {
  // checkOptionRules already refused an option_id with bike and a missing one otherwise.
  if (vehicleType === 'bike') return selectBikeBand(card.options, request.weight)
  const option = card.options.find((candidate) => candidate.id === request.optionId && candidate.vehicleType === vehicleType)
  if (!option) throw new PricingError(`option_id ${request.optionId} is not in your rate card for ${vehicleType}; read GET /business/rate-cards again`, 'option_id')
  // "Up to N kg" includes N.
  if (request.weight > option.maxWeightKg) throw new PricingError(`weight exceeds the capacity of ${option.label} (${option.maxWeightKg} kg)`, 'weight')
  return option
}

/** `max(min_fare, base + per_km × km + per_kg × kg)` in kobo, from the reported (rounded) distance. */
function priceByDistance(weight: number, distanceKm: number, rates: PlatformRates, currency: string): Quote {
  const fare = roundHalfAwayFromZero(rates.baseFare + rates.perKm * distanceKm + rates.perKg * weight)
  // A quote's weight has no bound of its own; past MAX_EXACT_KOBO a price can no longer be shown
  // exactly in naira (or is Infinity).
  if (!Number.isSafeInteger(fare) || fare > MAX_EXACT_KOBO) throw new PricingError('weight is too large to price', 'weight')
  return {
    price: Math.max(rates.minFare, fare),
    distanceKm,
    currency,
    pricingModel: 'distance',
    optionId: null,
    optionLabel: null,
    deliveryMode: deliveryModeByWeight(weight),
    fromZoneName: null,
    toZoneName: null,
  }
}

/** Distance pricing has no vehicle: the weight decides who carries it. */
export function deliveryModeByWeight(weight: number): DeliveryMode {
  if (weight <= 20) return 'MOTORBIKE'
  if (weight <= 1000) return 'BUS_VAN'
  return 'TRUCK'
}
