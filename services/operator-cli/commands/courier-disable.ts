import { disableCourier } from '../../../shared/couriers/accounts.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `courier:disable`: every token revoked (gateways drop them within a second), assigned orders
 * handed back to dispatch, orders already picked up listed for the operator to finish.
 */
export const courierDisable = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run({ sql, announce, actor }, input) {
    const disabled = await disableCourier(sql, actor, input.courierId)
    if (disabled.kind === 'no_courier') throw new OperatorInputError(`courier ${input.courierId} does not exist`)
    await announce({ kind: 'courier-token', tokenHashes: disabled.tokenHashes })
    return {
      courier_id: disabled.courier.id,
      disabled_at: disabled.courier.disabledAt?.toISOString() ?? null,
      handed_back: disabled.handedBack.flatMap((outcome) => (outcome.kind === 'changed' ? [outcome.order.order_id] : [])),
      still_with_courier: disabled.keptOrderIds,
    }
  },
})
