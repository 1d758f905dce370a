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
  return zones.find((zone) => booleanPointInPolygon(target, polygon([zone.polygon]))) ?? null
}

/** Like `findZone`, but a point outside every zone is the caller's 400. */
export function zoneOf(zones: Zone[], at: Point, end: 'pickup' | 'dropoff'): Zone {
  const zone = findZone(zones, at)
  if (!zone) throw new PricingError(`${end} point is outside the service zones of your rate card`)
  return zone
}
