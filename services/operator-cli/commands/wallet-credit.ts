import { toMajor } from '../../../shared/money.js'
import { creditWallet } from '../../../shared/db/wallets.js'
import { defineCommand } from '../command.js'
import { amountInKobo, optionalText, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `wallet:credit`: funding recorded from outside (the dashboard, a bank transfer). The
 * reference makes a retried credit harmless: the same reference credits once.
 */
export const walletCredit = defineCommand({
  options: {
    business: { type: 'string' },
    amount: { type: 'string' },
    reference: { type: 'string' },
  },
  prepare(flags) {
    return {
      businessId: requiredUuid(flags, 'business'),
      amount: amountInKobo(flags, 'amount'),
      reference: optionalText(flags, 'reference'),
    }
  },
  async run({ sql }, input) {
    const wallet = await sql.begin((tx) => creditWallet(tx, input.businessId, input.amount, input.reference))
    if (!wallet) throw new OperatorInputError(`business ${input.businessId} does not exist`)
    if (!wallet.credited) {
      process.stderr.write(`note: reference '${input.reference}' was credited before; balance unchanged\n`)
    }
    return { business_id: wallet.businessId, balance: toMajor(wallet.balance), currency: wallet.currency }
  },
})
