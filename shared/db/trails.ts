import type { CourierFix } from '../courier.js'
import type { Db } from './sql.js'

/** A point of an order's trail. */
export interface TrailPoint {
  at: Date
  latitude: number
  longitude: number
}

/**
 * Adds the fix to the trail of every order the courier holds (`assigned` or `picked_up`), each
 * trail kept to `maxPoints`; a point already there for that moment is kept as it was. Returns
 * how many orders the courier holds (a full trail or a repeated moment still counts its order).
 */
export async function appendTrailPoint(db: Db, courierId: string, fix: CourierFix, maxPoints: number): Promise<number> {
  const [{ held }] = await db<{ held: number }[]>`
    with held as (
      select o.id from orders o where o.courier_id = ${courierId} and o.status in ('assigned', 'picked_up')
    ), added as (
      insert into order_trail_points (order_id, at, latitude, longitude)
      select h.id, ${fix.at}, ${fix.latitude}, ${fix.longitude} from held h
      where (select count(*) from order_trail_points p where p.order_id = h.id) < ${maxPoints}
      on conflict do nothing
    )
    select count(*)::int as held from held`
  return held
}

export async function findTrail(db: Db, orderId: string): Promise<TrailPoint[]> {
  return db<TrailPoint[]>`select at, latitude, longitude from order_trail_points where order_id = ${orderId} order by at`
}
