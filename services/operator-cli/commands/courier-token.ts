import { issueCourierToken } from '../../../shared/couriers/accounts.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `courier:token`: another token for a courier (a new phone); earlier tokens keep working until `courier:disable`. */
export const courierToken = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run({ sql }, input) {
    const courier = await findCourier(sql, input.courierId)
    if (!courier) throw new OperatorInputError(`courier ${input.courierId} does not exist`)
    if (courier.disabledAt) throw new OperatorInputError(`courier ${input.courierId} is disabled`)
    const { token } = await issueCourierToken(sql, courier.id)
    return { courier_id: courier.id, courier_token: token }
  },
})
