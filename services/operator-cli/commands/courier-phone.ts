import { changeCourierPhone } from '../../../shared/couriers/accounts.js'
import { defineCommand } from '../command.js'
import { phoneFlag, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `courier:phone`: a courier's new phone, stored in E.164 as `courier:create` stores it, refused
 * when another enabled courier has it. The rider logs in to the courier app with it from now on,
 * and the gateways drop the courier's cached row, so the orders they accept carry it at once.
 */
export const courierPhoneCommand = defineCommand({
  options: {
    courier: { type: 'string' },
    phone: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier'), phone: phoneFlag(flags) }
  },
  async run({ sql, actor, announce }, input) {
    const changed = await changeCourierPhone(sql, actor, input.courierId, input.phone)
    if (changed.kind === 'not_found') throw new OperatorInputError(`courier ${input.courierId} does not exist`)
    if (changed.kind === 'invalid') throw new OperatorInputError(changed.message)
    // The gateways cache the courier's row: dropped, the next order they accept carries the new phone.
    await announce({ kind: 'courier', courierId: changed.courier.id })
    return { courier_id: changed.courier.id, phone: changed.courier.phone }
  },
})
