import { findBusiness, setBusinessRateCard } from '../../../shared/db/businesses.js'
import { rateCardExists } from '../../../shared/db/rate-cards.js'
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
  async run({ sql, announce }, input) {
    await sql.begin(async (tx) => {
      if (!(await findBusiness(tx, input.businessId))) {
        throw new OperatorInputError(`business ${input.businessId} does not exist`)
      }
      if (!(await rateCardExists(tx, input.rateCardId))) {
        throw new OperatorInputError(`rate card ${input.rateCardId} does not exist; import it with ratecard:import`)
      }
      await setBusinessRateCard(tx, input.businessId, input.rateCardId)
    })
    await announce({ kind: 'business', businessId: input.businessId })
    return { business_id: input.businessId, rate_card_id: input.rateCardId }
  },
})
