import { setShift, type CourierOnMap } from '../couriers/positions.js'
import { courierGiven, tellCouriers } from '../couriers/stream.js'
import type { OrderChangeOutcome } from '../orders/change.js'
import type { RedisClient } from '../redis.js'
import type { DispatchQueue } from './queue.js'

/** What follows a change: the one the state machine committed. */
export type Changed = Pick<Extract<OrderChangeOutcome, { kind: 'changed' }>, 'notices' | 'freed' | 'row' | 'reoffer'>

/** What the step after a change needs: where couriers are told, and the queue that says "look now". */
export interface AfterChangeDeps {
  redis: RedisClient
  /** The deployment's queue prefix (its Redis hash tag). */
  prefix: string
  dispatch: DispatchQueue
}

/** A live order the change handed back to `created`: dispatch offers it again. */
const handedBack = ({ row }: Changed): boolean => row.status === 'created' && row.livemode

/**
 * After an order change commits, whoever made it (a courier, a business, an operator in the
 * console or the CLI): the couriers it concerns hear of it on their stream, an order handed back
 * (or one whose offer it withdrew from the courier it assigned) is offered again, and each courier
 * it left free (an offer withdrawn, an order cancelled, handed back or delivered) has the orders
 * waiting near them looked at now, not at their next retry. A lost notice or job costs a delay,
 * never the change: the sweep and the retries find the rows.
 */
export async function afterOrderChange(deps: AfterChangeDeps, change: Changed, onError: (err: unknown) => void): Promise<void> {
  await tellCouriers(deps.redis, deps.prefix, change, onError)
  if (handedBack(change)) await deps.dispatch.offerAgain(change.row.id)
  await Promise.all([
    ...change.reoffer.map((orderId) => deps.dispatch.offerAgain(orderId)),
    ...change.freed.map((courierId) => deps.dispatch.courierFree(courierId)),
  ])
}

/** Whether `afterOrderChange` has anything to do (the CLI then skips connecting to Redis). */
export const concernsCouriers = (change: Changed): boolean =>
  change.notices.length > 0 || change.freed.length > 0 || change.reoffer.length > 0 || handedBack(change) || courierGiven(change) !== null

/** What a disabled courier left: their place on the map, the outcomes of handing back their orders, and the orders whose offer to them was withdrawn. */
export interface LeftByCourier {
  courier: CourierOnMap
  handedBack: OrderChangeOutcome[]
  withdrawnOrderIds: string[]
}

/**
 * After a courier is disabled: they leave the map (off shift, so the couriers-available gauge and
 * the operator's map stop counting them; dispatch already passes over a disabled courier), each
 * order handed back goes through the step after a change, and each order whose offer to them was
 * withdrawn is offered to the next courier now, not at the sweep (which a job delayed to its retry
 * would absorb).
 */
export async function afterCourierLeft(deps: AfterChangeDeps, left: LeftByCourier, onError: (err: unknown) => void): Promise<void> {
  await setShift(deps.redis, deps.prefix, left.courier, 'offline').catch(onError)
  for (const outcome of left.handedBack) if (outcome.kind === 'changed') await afterOrderChange(deps, outcome, onError)
  await Promise.all(left.withdrawnOrderIds.map((orderId) => deps.dispatch.offerAgain(orderId)))
}
