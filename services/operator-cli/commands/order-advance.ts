import { ORDER_STATUSES, type Courier } from '../../../shared/courier.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { courierOnOrder } from '../../../shared/dispatch/views.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { defineCommand, type OperatorContext } from '../command.js'
import { optionalText, phoneFlag, requiredChoice, requiredOrderId, requiredText, requiredUuid } from '../flags.js'
import { tellCouriersOf } from '../notices.js'
import { OperatorInputError } from '../operator-input-error.js'
import { orderChangeAnswer } from '../order-answer.js'

const FREE_TEXT_FLAGS = ['courier-name', 'courier-phone', 'vehicle-plate']
/** Where dispatch can move an order; a cancel is `order:cancel`'s, which refunds it. */
const TARGETS = ORDER_STATUSES.filter((status) => status !== 'cancelled')

/**
 * `order:advance`: the operator moves an order one step, through the state machine like every
 * change (docs/contracts.md section 6). `--to assigned` takes a registered courier
 * (`--courier ID`) or one outside the system by name and phone; unassigning (`--to created`) and
 * failing need `--reason`.
 */
export const orderAdvance = defineCommand({
  options: {
    order: { type: 'string' },
    to: { type: 'string' },
    courier: { type: 'string' },
    'courier-name': { type: 'string' },
    'courier-phone': { type: 'string' },
    'vehicle-plate': { type: 'string' },
    reason: { type: 'string' },
  },
  prepare(flags) {
    const orderId = requiredOrderId(flags, 'order')
    if (flags.to?.trim() === 'cancelled') throw new OperatorInputError(`order:advance does not cancel; cancel with order:cancel --order ${orderId} [--reason …]`)
    const to = requiredChoice(flags, 'to', TARGETS)
    const assigning = to === 'assigned'
    if (!assigning) {
      for (const flag of ['courier', ...FREE_TEXT_FLAGS]) {
        if (flags[flag] !== undefined) throw new OperatorInputError(`--${flag} is only for --to assigned`)
      }
    }
    const registered = assigning && flags.courier !== undefined
    if (registered && FREE_TEXT_FLAGS.some((flag) => flags[flag] !== undefined)) {
      throw new OperatorInputError('--courier names a registered courier; --courier-name, --courier-phone and --vehicle-plate are for one outside the system, not both')
    }
    const courierId = registered ? requiredUuid(flags, 'courier') : null
    const freeText: Courier | null = assigning && !registered
      ? { name: requiredText(flags, 'courier-name'), phone: phoneFlag(flags, 'courier-phone'), vehicle_plate: optionalText(flags, 'vehicle-plate') }
      : null
    return { orderId, to, courierId, freeText, reason: optionalText(flags, 'reason') }
  },
  async run(context, input) {
    const courier = input.courierId ? await registeredCourier(context, input.courierId) : input.freeText
    const outcome = await changeOrder(context.sql, { orderId: input.orderId, scope: null }, { kind: 'advance', to: input.to, courier, reason: input.reason, retry: true }, { actor: context.actor })
    await tellCouriersOf(context, outcome)
    return orderChangeAnswer(outcome)
  },
})

/** A courier the operator may hand an order to: registered and not disabled. */
async function registeredCourier({ sql }: OperatorContext, courierId: string): Promise<Courier> {
  const courier = await findCourier(sql, courierId)
  if (!courier) throw new OperatorInputError(`courier ${courierId} does not exist`)
  if (courier.disabledAt) throw new OperatorInputError(`courier ${courierId} is disabled`)
  return courierOnOrder(courier)
}
