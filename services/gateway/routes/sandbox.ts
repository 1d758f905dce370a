import type { FastifyInstance } from 'fastify'
import type { Sql } from '../../../shared/db/sql.js'
import { isOrderId } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { SANDBOX_COURIER } from '../../../shared/orders/sandbox-courier.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { sandboxAdvanceSchema } from '../../../shared/schemas/order.js'
import { orderNotFound, sendOrderChange } from '../order-answer.js'

/**
 * The manual half of the sandbox (docs/contracts.md section 8): a test order moved one allowed
 * step at once, as the courier would, through the same state machine. A live key's order is
 * not a test order: 404.
 */
export default async function sandboxRoutes(app: FastifyInstance, { sql }: { sql: Sql }) {
  app.post<{ Params: { order_id: string } }>('/business/sandbox/orders/:order_id/advance', async (request, reply) => {
    const { order_id: orderId } = request.params
    const body = parseBody(sandboxAdvanceSchema, request.body)
    if (!isOrderId(orderId) || request.caller.livemode) throw orderNotFound(orderId)
    // A move that needs a reason gets one saying who made it, unless the caller gave its own.
    const reason = body.reason ?? (['created', 'failed'].includes(body.to) ? 'sandbox: moved through the API' : null)
    const outcome = await changeOrder(sql, { orderId, scope: { businessId: request.caller.businessId, livemode: false } }, {
      kind: 'advance', to: body.to, courier: body.to === 'assigned' ? SANDBOX_COURIER : null, reason,
    })
    return sendOrderChange(reply, outcome)
  })
}
