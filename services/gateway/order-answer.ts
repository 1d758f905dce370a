import type { FastifyReply } from 'fastify'
import { ApiError } from '../../shared/errors/api-error.js'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'

/**
 * The one place an order change becomes HTTP: the order after it (200), or the refusal as the
 * spec's error body through the gateway's error handler.
 */
export function sendOrderChange(reply: FastifyReply, outcome: OrderChangeOutcome) {
  if (outcome.kind === 'changed' || outcome.kind === 'unchanged') return reply.code(200).send(outcome.order)
  throw orderChangeRefusal(outcome)
}

/** Why a change did not happen, as the spec's error body: the business's routes and the courier's alike. */
export function orderChangeRefusal(outcome: Exclude<OrderChangeOutcome, { kind: 'changed' | 'unchanged' }>): ApiError {
  switch (outcome.kind) {
    case 'not_found':
      return orderNotFound(outcome.orderId)
    case 'refused':
    case 'moved_on':
      return new ApiError(409, outcome.message)
    case 'invalid':
      return new ApiError(400, outcome.message)
  }
}

export function orderNotFound(orderId: string): ApiError {
  return new ApiError(404, `Order ${orderId} was not found`)
}
