import type { Db } from './sql.js'

/**
 * Live `created` orders with no pending offer and no offer decided in the last `quietS` seconds,
 * older than `graceS`: the ones whose dispatch job may have been lost (a crash between a commit
 * and its enqueue). The dispatcher's sweep queues them again; a job already waiting absorbs it.
 */
export async function findOrdersWithoutOffer(db: Db, graceS: number, quietS: number, limit: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select o.id from orders o
    where o.status = 'created' and o.livemode and o.pickup_lat is not null
      and o.updated_at < now() - make_interval(secs => ${graceS})
      and not exists (
        select 1 from dispatch_offers d
        where d.order_id = o.id and (d.status = 'pending' or d.decided_at > now() - make_interval(secs => ${quietS})))
    order by o.created_at limit ${limit}`
  return rows.map((row) => row.id)
}

/** Live orders waiting for a courier, for the gauge. */
export async function countOrdersWaitingForCourier(db: Db): Promise<number> {
  const [row] = await db<{ count: number }[]>`select count(*)::int as count from orders where status = 'created' and livemode`
  return row.count
}
