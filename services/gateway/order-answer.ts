import type { FastifyReply } from 'fastify'
import { ApiError } from '../../shared/errors/api-error.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'

/**
 * The one place an order change becomes HTTP: the order after it (200), or the refusal as the
 * spec's error body through the gateway's error handler.
 */
export function sendOrderChange(reply: FastifyReply, outcome: OrderChangeOutcome) {
  switch (outcome.kind) {
    case 'changed':
    case 'unchanged':
      return reply.code(200).send(outcome.order)
    case 'not_found':
      throw orderNotFound(outcome.orderId)
    case 'refused':
    case 'moved_on':
      throw new ApiError(409, outcome.message)
    case 'invalid':
      throw new ApiError(400, outcome.message)
  }
}

export function orderNotFound(orderId: string): ApiError {
  return new ApiError(404, `Order ${orderId} was not found`)
}
