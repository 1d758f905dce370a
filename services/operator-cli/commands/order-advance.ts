import { ORDER_STATUSES } from '../../../shared/courier.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { defineCommand } from '../command.js'
import { optionalText, requiredChoice, requiredOrderId, requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'
import { orderChangeAnswer } from '../order-answer.js'

/**
 * `order:advance`: dispatch moves an order one step, through the state machine like every
 * change (docs/contracts.md section 6). `--to assigned` names the courier; unassigning
 * (`--to created`) and failing need `--reason`.
 */
export const orderAdvance = defineCommand({
  options: {
    order: { type: 'string' },
    to: { type: 'string' },
    'courier-name': { type: 'string' },
    'courier-phone': { type: 'string' },
    'vehicle-plate': { type: 'string' },
    reason: { type: 'string' },
  },
  prepare(flags) {
    const orderId = requiredOrderId(flags, 'order')
    const to = requiredChoice(flags, 'to', ORDER_STATUSES)
    const assigning = to === 'assigned'
    if (!assigning) {
      for (const flag of ['courier-name', 'courier-phone', 'vehicle-plate']) {
        if (flags[flag] !== undefined) throw new OperatorInputError(`--${flag} is only for --to assigned`)
      }
    }
    const courier = assigning
      ? { name: requiredText(flags, 'courier-name'), phone: requiredText(flags, 'courier-phone'), vehicle_plate: optionalText(flags, 'vehicle-plate') }
      : null
    return { orderId, to, courier, reason: optionalText(flags, 'reason') }
  },
  async run({ sql, actor }, input) {
    const outcome = await changeOrder(sql, { orderId: input.orderId, scope: null }, { kind: 'advance', to: input.to, courier: input.courier, reason: input.reason }, { actor })
    return orderChangeAnswer(outcome)
  },
})
