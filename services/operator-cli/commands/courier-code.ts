import { issueLoginCode } from '../../../shared/couriers/login.js'
import { findCourier } from '../../../shared/db/couriers.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `courier:code`: a one-time code for the courier web app (DESIGN 14), replacing any earlier one. */
export const courierCode = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run({ sql, config }, input) {
    const courier = await findCourier(sql, input.courierId)
    if (!courier) throw new OperatorInputError(`courier ${input.courierId} does not exist`)
    if (courier.disabledAt) throw new OperatorInputError(`courier ${input.courierId} is disabled`)
    const { code, expiresAt } = await issueLoginCode(sql, courier.id, config.COURIER_CODE_TTL_MIN)
    return { courier_id: courier.id, phone: courier.phone, login_code: code, login_code_expires_at: expiresAt.toISOString(), courier_app: `${config.CONSOLE_PUBLIC_URL}/courier` }
  },
})
