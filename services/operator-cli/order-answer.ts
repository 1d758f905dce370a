import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import { OperatorInputError } from './operator-input-error.js'

/** The one place an order change becomes the CLI's answer: the order printed, or one line on stderr and exit 1. */
export function orderChangeAnswer(outcome: OrderChangeOutcome): Record<string, unknown> {
  switch (outcome.kind) {
    case 'changed':
    case 'unchanged':
      return outcome.order
    case 'not_found':
      throw new OperatorInputError(`order ${outcome.orderId} does not exist`)
    case 'refused':
    case 'invalid':
    case 'moved_on':
      throw new OperatorInputError(outcome.message)
  }
}
