import { toMajor } from '../../../shared/money.js'
import { findWallet } from '../../../shared/db/wallets.js'
import { defineCommand } from '../command.js'
import { livemodeFlag, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `wallet:show`: the balance in major units, as the API shows money. */
export const walletShow = defineCommand({
  options: {
    business: { type: 'string' },
    mode: { type: 'string' },
  },
  prepare(flags) {
    return { businessId: requiredUuid(flags, 'business'), livemode: livemodeFlag(flags) }
  },
  async run({ sql }, input) {
    const wallet = await findWallet(sql, input.businessId, input.livemode)
    if (!wallet) throw new OperatorInputError(input.livemode ? `business ${input.businessId} does not exist` : `business ${input.businessId} has no test wallet`)
    return { business_id: wallet.businessId, balance: toMajor(wallet.balance), currency: wallet.currency, livemode: wallet.livemode }
  },
})
