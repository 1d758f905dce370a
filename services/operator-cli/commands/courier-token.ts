import { issueCourierToken, issueToCourier } from '../../../shared/couriers/accounts.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `courier:token`: another token for a courier (a new phone), audited as `courier.token`; earlier tokens keep working until `courier:disable`. */
export const courierToken = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run({ sql, actor }, input) {
    const issue = await issueToCourier(sql, actor, input.courierId, 'courier.token', (tx, courier) => issueCourierToken(tx, courier.id))
    if (issue.kind === 'refused') throw new OperatorInputError(issue.message)
    return { courier_id: issue.courier.id, courier_token: issue.issued.token }
  },
})
