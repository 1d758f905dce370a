import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import { OperatorInputError } from './operator-input-error.js'

/** The one place an order change becomes the CLI's answer: the order printed, or one line on stderr and exit 1. */
export function orderChangeAnswer(outcome: OrderChangeOutcome): Record<string, unknown> {
  switch (outcome.kind) {
    case 'changed':
      return outcome.order
    case 'unchanged':
      // A retry, as wallet:credit's with a used reference: exit 0, and a word that nothing moved.
      process.stderr.write(`note: ${String(outcome.order.order_id)} is already ${String(outcome.order.status)}; nothing changed\n`)
      return outcome.order
    case 'not_found':
      throw new OperatorInputError(`order ${outcome.orderId} does not exist`)
    case 'refused':
    case 'invalid':
    case 'moved_on':
      throw new OperatorInputError(outcome.message)
  }
}
