import { toMajor } from '../../../shared/money.js'
import { creditWalletAs } from '../../../shared/accounts/operator-actions.js'
import { WALLET_MAX_KOBO } from '../../../shared/db/wallets.js'
import { defineCommand } from '../command.js'
import { amountInKobo, livemodeFlag, optionalText, requiredUuid } from '../flags.js'
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
    mode: { type: 'string' },
  },
  prepare(flags) {
    return {
      businessId: requiredUuid(flags, 'business'),
      amount: amountInKobo(flags, 'amount'),
      reference: optionalText(flags, 'reference'),
      livemode: livemodeFlag(flags),
    }
  },
  async run({ sql, actor }, input) {
    const wallet = await creditWalletAs(sql, actor, input)
    if (!wallet) throw new OperatorInputError(input.livemode ? `business ${input.businessId} does not exist` : `business ${input.businessId} has no test wallet; make a test key first (key:create --mode test)`)
    if (wallet.kind === 'over_limit') {
      throw new OperatorInputError(`--amount would take the balance (${toMajor(wallet.balance)}) past the most a wallet holds, ${toMajor(WALLET_MAX_KOBO)} ${wallet.currency}; nothing was credited`)
    }
    if (wallet.kind === 'repeated') {
      // A retry names the same amount; another amount under a used reference is a mistake, not a retry.
      const earlier = wallet.earlier
      if (earlier.amount !== input.amount) {
        throw new OperatorInputError(`reference '${input.reference}' already credited ${toMajor(earlier.amount)} on ${earlier.createdAt.toISOString()}, not ${toMajor(input.amount)}; nothing was credited: use another reference`)
      }
      process.stderr.write(`note: reference '${input.reference}' was credited before; balance unchanged\n`)
    }
    return { business_id: wallet.businessId, balance: toMajor(wallet.balance), currency: wallet.currency, livemode: wallet.livemode }
  },
})
