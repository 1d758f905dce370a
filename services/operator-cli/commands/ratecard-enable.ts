import { enableRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `ratecard:enable`: idempotent; replaces whatever card the business had. */
export const ratecardEnable = defineCommand({
  options: {
    business: { type: 'string' },
    'rate-card': { type: 'string' },
  },
  prepare(flags) {
    return { businessId: requiredUuid(flags, 'business'), rateCardId: requiredUuid(flags, 'rate-card') }
  },
  async run({ sql, announce, actor }, input) {
    const enabling = await enableRateCardAs(sql, actor, input.businessId, input.rateCardId)
    if (enabling.kind === 'no_business') throw new OperatorInputError(`business ${input.businessId} does not exist`)
    if (enabling.kind === 'no_rate_card') throw new OperatorInputError(`rate card ${input.rateCardId} does not exist; import it with ratecard:import`)
    await announce({ kind: 'business', businessId: input.businessId })
    return { business_id: input.businessId, rate_card_id: input.rateCardId }
  },
})
