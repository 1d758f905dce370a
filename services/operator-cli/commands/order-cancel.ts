import { changeOrder } from '../../../shared/orders/change.js'
import { defineCommand } from '../command.js'
import { optionalText, requiredOrderId } from '../flags.js'
import { tellCouriersOf } from '../notices.js'
import { orderChangeAnswer } from '../order-answer.js'

/** `order:cancel`: the operator cancels, free (a full refund), until the order is picked up. */
export const orderCancel = defineCommand({
  options: {
    order: { type: 'string' },
    reason: { type: 'string' },
  },
  prepare(flags) {
    return { orderId: requiredOrderId(flags, 'order'), reason: optionalText(flags, 'reason') }
  },
  async run(context, input) {
    const outcome = await changeOrder(context.sql, { orderId: input.orderId, scope: null }, { kind: 'cancel', by: 'operator', reason: input.reason }, { actor: context.actor })
    await tellCouriersOf(context, outcome)
    return orderChangeAnswer(outcome)
  },
})
