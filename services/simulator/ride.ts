import type { Point } from '../../shared/courier.js'
import { haversineKm } from '../../shared/pricing/distance.js'
import type { HeldOrder, Proof } from './answers.js'

// Where a simulated rider is going, and the move it makes on getting there.

/** What one simulated rider is doing: waiting for an offer, or riding to an order's pickup or dropoff, or back to its sender. */
export type Errand = { kind: 'idle' } | Ride
export type Ride = { kind: 'to_pickup' | 'to_dropoff' | 'to_return'; orderId: string; target: Point; pickup: Point; dropoff: Point; proof: Proof }

/** The courier API's move at the end of each ride. */
export const MOVES = { to_pickup: 'pickup', to_dropoff: 'deliver', to_return: 'return' } as const
/** Where a held order's ride goes on from, by how far the order got. */
const RESUMED = { assigned: 'to_pickup', picked_up: 'to_dropoff', failed: 'to_return' } as const

/** The ride an order the rider holds calls for, by how far it got: to its pickup, its dropoff, or back to its sender. */
export function rideOf(order: HeldOrder): Ride {
  const kind = RESUMED[order.status]
  const pickup = { lat: order.pickup.latitude, lng: order.pickup.longitude }
  const dropoff = { lat: order.dropoff.latitude, lng: order.dropoff.longitude }
  return { kind, orderId: order.order_id, target: kind === 'to_dropoff' ? dropoff : pickup, pickup, dropoff, proof: order.proof }
}

/** `km` further along the straight line from `from` to `to`, stopping at `to`. */
export function towards(from: Point, to: Point, km: number): Point {
  const left = haversineKm(from, to)
  if (left <= km) return to
  const share = km / left
  return { lat: from.lat + (to.lat - from.lat) * share, lng: from.lng + (to.lng - from.lng) * share }
}
