import { issueToCourier } from '../../../shared/couriers/accounts.js'
import { issueLoginCode } from '../../../shared/couriers/login.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `courier:code`: a one-time code for the courier web app (DESIGN 14), replacing any earlier one; audited as `courier.code`. */
export const courierCode = defineCommand({
  options: {
    courier: { type: 'string' },
  },
  prepare(flags) {
    return { courierId: requiredUuid(flags, 'courier') }
  },
  async run({ sql, config, actor }, input) {
    const issue = await issueToCourier(sql, actor, input.courierId, 'courier.code', (tx, courier) => issueLoginCode(tx, courier.id, config.COURIER_CODE_TTL_MIN))
    if (issue.kind === 'refused') throw new OperatorInputError(issue.message)
    const { courier, issued: { code, expiresAt } } = issue
    return { courier_id: courier.id, phone: courier.phone, login_code: code, login_code_expires_at: expiresAt.toISOString(), courier_app: `${config.CONSOLE_PUBLIC_URL}/courier` }
  },
})
