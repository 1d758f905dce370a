import type { FastifyReply, FastifyRequest } from 'fastify'
import { errorBody } from '../../shared/errors/error-body.js'
import { toMajor } from '../../shared/money.js'
import type { PlacementOutcome } from '../../shared/placement/outcome.js'

/**
 * The one place a placement outcome becomes HTTP, for the first answer, a replay and a read
 * alike. Every answer carries `placement_id`; an error answer is the spec's error body with this
 * request's path. Null (not settled within the wait) is the traceable 503.
 */
export function sendPlacement(request: FastifyRequest, reply: FastifyReply, placementId: string, outcome: PlacementOutcome | null) {
  const fail = (statusCode: number, message: string, extra: Record<string, unknown> = {}) =>
    reply.code(statusCode).send(errorBody(statusCode, request.url, message, { ...extra, placement_id: placementId, request_id: request.id }))

  if (outcome === null) {
    return fail(503, `Placement is still being processed; retry with the same Idempotency-Key or read GET /v2/business/placements/${placementId}`)
  }
  switch (outcome.kind) {
    case 'placed': {
      const count = outcome.orders.length
      return reply.code(201).send({
        status: 'Success',
        description: `${count} ${count === 1 ? 'order' : 'orders'} placed`,
        currency: outcome.currency,
        charged_total: toMajor(outcome.chargedTotal),
        orders: outcome.orders.map((order) => ({ order_id: order.orderId, price: toMajor(order.price) })),
        placement_id: placementId,
      })
    }
    case 'unpriceable':
      return fail(400, 'One or more orders could not be placed', { errors: outcome.errors })
    case 'insufficient_balance':
      return fail(400, 'Insufficient wallet balance', { required: toMajor(outcome.required), available: toMajor(outcome.available), currency: outcome.currency })
    case 'not_processed':
      return fail(503, 'Placement was not processed; nothing was charged')
  }
}
