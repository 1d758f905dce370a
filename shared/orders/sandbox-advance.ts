import type { OrderStatus } from '../courier.js'
import type { Sql } from '../db/sql.js'
import { changeOrder, type OrderChangeOutcome } from './change.js'
import { SANDBOX_COURIER } from './sandbox-courier.js'

/**
 * A test order moved one allowed step by hand, as the sandbox courier would (the API's
 * `POST /v2/business/sandbox/orders/{id}/advance` and the console's button): the courier is the
 * sandbox's, and a move that needs a reason gets one saying who made it unless one is given.
 */
export function advanceTestOrder(sql: Sql, target: { orderId: string; businessId: string }, to: OrderStatus, reason: string | null): Promise<OrderChangeOutcome> {
  return changeOrder(sql, { orderId: target.orderId, scope: { businessId: target.businessId, livemode: false } }, {
    kind: 'advance',
    to,
    courier: to === 'assigned' ? SANDBOX_COURIER : null,
    reason: reason ?? (['created', 'failed'].includes(to) ? 'sandbox: moved through the API' : null),
  })
}
