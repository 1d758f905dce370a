import { PricingError } from '../errors/pricing-error.js'
import type { RateOption } from '../courier.js'

// A card's options outlive many quotes (the quoter caches cards), so their bands are ordered once.
const ordered = new WeakMap<RateOption[], RateOption[]>()

/** Bike options ordered from the lightest band up; the importer guarantees they tile without gaps. */
function bikeBands(options: RateOption[]): RateOption[] {
  let bands = ordered.get(options)
  if (!bands) {
    bands = options.filter((option) => option.vehicleType === 'bike').sort((a, b) => (a.minWeightKg ?? 0) - (b.minWeightKg ?? 0))
    ordered.set(options, bands)
  }
  return bands
}

/**
 * The band with `min < weight <= max`. The lowest band also takes its own minimum, so a card
 * starting at 0 kg or at 1 kg still prices the lightest parcel it claims to carry.
 */
export function selectBikeBand(options: RateOption[], weight: number): RateOption {
  const bands = bikeBands(options)
  if (bands.length === 0) throw new PricingError('Your rate card has no bike option; read GET /business/rate-cards again')
  const lowest = bands[0]
  const found = bands.find((band, index) => {
    const min = band.minWeightKg ?? 0
    const aboveMin = index === 0 ? weight >= min : weight > min
    return aboveMin && weight <= band.maxWeightKg
  })
  if (found) return found
  const largest = Math.max(...bands.map((band) => band.maxWeightKg))
  if (weight > largest) throw new PricingError(`weight exceeds the largest bike band (${largest} kg); use bus_van or truck`, 'weight')
  throw new PricingError(`weight is below the smallest bike band (${lowest.minWeightKg ?? 0} kg)`, 'weight')
}
