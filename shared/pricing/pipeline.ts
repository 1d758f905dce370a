import { PricingError } from '../errors/pricing-error.js'
import type { Geocoder } from '../geo/geocoder.js'
import { checkServiceArea, resolveEnds, type ServiceArea, type ShipmentEnds } from '../geo/locate.js'
import type { DistanceProvider } from './distance.js'
import { checkOptionRules, priceShipment } from './engine.js'
import type { PlatformRates, Point, Quote, RateCard, VehicleType } from '../courier.js'

/**
 * The one pricing pipeline of a quote and of every shipment of a placement, in the refusal order of
 * docs/contracts.md: option rules → no card → geocoding → service area (`locateForPricing`) → option, band
 * and capacity → zones → zone price → distance limit (`priceLocated`). It is cut in two because
 * the placement worker must not hold its transaction open across geocoder and router calls:
 * the first half runs before the transaction, the second with the card and rates read inside it.
 */

/** A quote request or a shipment, in the API's field names; `weight` is the billable weight. */
export interface QuoteInput extends ShipmentEnds {
  weight: number
  vehicle_type?: VehicleType
  option_id?: string
}

/**
 * The billable weight of `weight` kg a unit, `quantity` units: rounded to the milligram, so float
 * noise (0.1 × 3) changes no band, and a quote and the placement of the same load weigh the same.
 */
export function billableWeight(weight: number, quantity = 1): number {
  return Math.round(weight * quantity * 1e6) / 1e6
}

/** What locating needs besides the input: where the ends are, how far apart, which area is served. */
export interface LocateTools {
  geocoder: Geocoder
  distance: DistanceProvider
  serviceArea: ServiceArea
}

/**
 * What the caller knows before locating. `hasCard` lets "no card" be refused before any
 * geocoding although the worker reads the card itself only inside its transaction (it passes
 * the business row's `rate_card_id`); `roadFactor` comes from the platform rates.
 */
export interface LocateFacts {
  hasCard: boolean
  roadFactor: number
}

/** Both ends placed and measured: everything slow about a quote is done. */
export interface Located {
  pickup: Point
  dropoff: Point
  distanceKm: number
}

/** The first half: rules that need no card, the card's presence, geocoding, service area, distance. Throws `PricingError`. */
export async function locateForPricing(input: QuoteInput, facts: LocateFacts, tools: LocateTools): Promise<Located> {
  checkOptionRules({ vehicleType: input.vehicle_type, optionId: input.option_id })
  // Before geocoding: an account without a card gets the same answer whatever the address.
  if (input.vehicle_type !== undefined && !facts.hasCard) throw new PricingError('No rate card is enabled for this account')
  const ends = await resolveEnds(input, tools.geocoder)
  checkServiceArea(ends, tools.serviceArea)
  const distanceKm = await tools.distance.measure(ends.pickup, ends.dropoff, facts.roadFactor)
  return { pickup: ends.pickup, dropoff: ends.dropoff, distanceKm }
}

/** The second half, pure: the card's option, zones and price, or the distance fare; then the distance limit. */
export function priceLocated(input: QuoteInput, located: Located, card: RateCard | null, rates: PlatformRates, currency: string): Quote {
  const request = { pickup: located.pickup, dropoff: located.dropoff, weight: input.weight, vehicleType: input.vehicle_type, optionId: input.option_id }
  return priceShipment(request, located.distanceKm, card, rates, currency)
}
