import { setBusinessRateCard } from '../../../shared/db/businesses.js'
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
  async run({ sql, announce }, input) {
    if (!(await setBusinessRateCard(sql, input.businessId, null))) {
      throw new OperatorInputError(`business ${input.businessId} does not exist`)
    }
    await announce({ kind: 'business', businessId: input.businessId })
    return { business_id: input.businessId, rate_card_id: null }
  },
})
