import type { FastifyReply } from 'fastify'
import type { OrderChangeOutcome } from '../../shared/orders/change.js'
import { orderChangeRefusal } from '../../shared/orders/refusals.js'

/**
 * The one place an order change becomes HTTP: the order after it (200), or the refusal as the
 * spec's error body through the gateway's error handler.
 */
export function sendOrderChange(reply: FastifyReply, outcome: OrderChangeOutcome) {
  if (outcome.kind === 'changed' || outcome.kind === 'unchanged') return reply.code(200).send(outcome.order)
  throw orderChangeRefusal(outcome)
}
