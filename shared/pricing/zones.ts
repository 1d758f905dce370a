import { booleanPointInPolygon } from '@turf/boolean-point-in-polygon'
import { point, polygon } from '@turf/helpers'
import { PricingError } from '../errors/pricing-error.js'
import type { Point, Zone } from '../courier.js'

/**
 * The first zone, in the card's order, that contains the point. turf's `ignoreBoundary`
 * defaults to false, so a point on an edge or a vertex is inside, as docs/contracts.md asks.
 */
export function findZone(zones: Zone[], at: Point): Zone | null {
  const target = point([at.lng, at.lat])
  return zones.find((zone) => booleanPointInPolygon(target, featureOf(zone))) ?? null
}

// turf checks and wraps a ring on every `polygon()` call. A card's zones outlive many quotes
// (the quoter caches cards; a placement prices all its shipments with one), so each zone's
// feature is made once and goes with its zone.
type ZoneFeature = ReturnType<typeof polygon>
const features = new WeakMap<Zone, ZoneFeature>()

function featureOf(zone: Zone): ZoneFeature {
  let feature = features.get(zone)
  if (!feature) {
    feature = polygon([zone.polygon])
    features.set(zone, feature)
  }
  return feature
}

/** Like `findZone`, but a point outside every zone is the caller's 400. */
export function zoneOf(zones: Zone[], at: Point, end: 'pickup' | 'dropoff'): Zone {
  const zone = findZone(zones, at)
  if (!zone) throw new PricingError(`${end} point is outside the service zones of your rate card`)
  return zone
}
