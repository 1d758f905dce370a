import type { FastifyInstance } from 'fastify'
import type { Sql } from '../../../shared/db/sql.js'
import { isOrderId } from '../../../shared/ids.js'
import { advanceTestOrder } from '../../../shared/orders/sandbox-advance.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { sandboxAdvanceSchema } from '../../../shared/schemas/order.js'
import { orderNotFound } from '../../../shared/orders/refusals.js'
import { sendOrderChange } from '../order-answer.js'

/**
 * The manual half of the sandbox (docs/contracts.md section 8): a test order moved one allowed
 * step at once, as the courier would, through the same state machine. A live key's order is
 * not a test order: 404.
 */
export default async function sandboxRoutes(app: FastifyInstance, { sql }: { sql: Sql }) {
  app.post<{ Params: { order_id: string } }>('/business/sandbox/orders/:order_id/advance', async (request, reply) => {
    const { order_id: orderId } = request.params
    // A live key has no test order to move, whatever it sends: 404 before the body is read.
    if (!isOrderId(orderId) || request.caller.livemode) throw orderNotFound(orderId)
    const body = parseBody(sandboxAdvanceSchema, request.body)
    const outcome = await advanceTestOrder(sql, { orderId, businessId: request.caller.businessId }, body.to, body.reason ?? null)
    return sendOrderChange(reply, outcome)
  })
}
