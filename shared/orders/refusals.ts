import { ApiError } from '../errors/api-error.js'
import type { OrderChangeOutcome } from './change.js'

/**
 * Why a change did not happen, as the spec's error body: the one mapping of a refused order
 * change to HTTP, for the business's routes, the courier's and the courier web app alike.
 */
export function orderChangeRefusal(outcome: Exclude<OrderChangeOutcome, { kind: 'changed' | 'unchanged' }>): ApiError {
  switch (outcome.kind) {
    case 'not_found':
      return orderNotFound(outcome.orderId)
    case 'refused':
    case 'moved_on':
      return new ApiError(409, outcome.message)
    case 'invalid':
      // As a validation error names its field: `errors: [{ field, message }]`.
      return new ApiError(400, outcome.message, outcome.field ? { errors: [{ field: outcome.field, message: outcome.message }] } : {})
  }
}

export function orderNotFound(orderId: string): ApiError {
  // `/orders/` with nothing after it reaches the route of one order with an empty id.
  if (orderId === '') return new ApiError(404, 'No order id was given: /orders/{order_id}')
  return new ApiError(404, `Order ${orderId} was not found`)
}
