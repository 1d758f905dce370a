import { disableRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `ratecard:disable`: the business falls back to distance pricing only. */
export const ratecardDisable = defineCommand({
  options: {
    business: { type: 'string' },
  },
  prepare(flags) {
    return { businessId: requiredUuid(flags, 'business') }
  },
  async run({ sql, announce, actor }, input) {
    if (!(await disableRateCardAs(sql, actor, input.businessId))) {
      throw new OperatorInputError(`business ${input.businessId} does not exist`)
    }
    await announce({ kind: 'business', businessId: input.businessId })
    return { business_id: input.businessId, rate_card_id: null }
  },
})
