import { disableCourierAndAnnounce } from '../../../shared/couriers/accounts.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { redispatchLeft } from '../notices.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `courier:disable`: every token revoked (gateways drop them within a second), web-app sessions
 * and login code gone, assigned orders
 * handed back and offered orders withdrawn, each offered to the next courier at once, orders already picked up listed for the operator to finish.
 */
export const courierDisable = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run(context, input) {
    const { sql, announce, actor } = context
    const disabled = await disableCourierAndAnnounce(sql, actor, input.courierId, { announce, redispatch: (left) => redispatchLeft(context, left) })
    if (!disabled) throw new OperatorInputError(`courier ${input.courierId} does not exist`)
    return {
      courier_id: disabled.courierId,
      disabled_at: disabled.disabledAt?.toISOString() ?? null,
      sessions_ended: disabled.sessionsEnded,
      handed_back: disabled.handedBack,
      still_with_courier: disabled.stillWithCourier,
    }
  },
})
