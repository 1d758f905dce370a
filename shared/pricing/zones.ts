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
// feature is made once and goes with its zone, with its bounding box: turf then passes over a
// zone the point is nowhere near without walking its ring (a card of 200 zones of 500 vertices
// walked 100 000 edges a quote).
type ZoneFeature = ReturnType<typeof polygon>
const features = new WeakMap<Zone, ZoneFeature>()

function featureOf(zone: Zone): ZoneFeature {
  let feature = features.get(zone)
  if (!feature) {
    feature = polygon([zone.polygon], {}, { bbox: boundsOf(zone.polygon) })
    features.set(zone, feature)
  }
  return feature
}

/** `[west, south, east, north]`: GeoJSON's bbox, inclusive on every side as turf reads it. */
function boundsOf(ring: [number, number][]): [number, number, number, number] {
  const bounds: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity]
  for (const [lng, lat] of ring) {
    bounds[0] = Math.min(bounds[0], lng)
    bounds[1] = Math.min(bounds[1], lat)
    bounds[2] = Math.max(bounds[2], lng)
    bounds[3] = Math.max(bounds[3], lat)
  }
  return bounds
}

/** Like `findZone`, but a point outside every zone is the caller's 400. */
export function zoneOf(zones: Zone[], at: Point, end: 'pickup' | 'dropoff'): Zone {
  const zone = findZone(zones, at)
  if (!zone) throw new PricingError(`${end} point is outside the service zones of your rate card`)
  return zone
}
