import { issueApiKey } from '../../../shared/accounts/api-keys.js'
import { toMinor } from '../../../shared/money.js'
import { API_KEY_SCOPES, isApiKeyScope } from '../../../shared/db/api-keys.js'
import { defineCommand } from '../command.js'
import { livemodeFlag, requiredText, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `key:create`: the key is printed once; only its hash is stored. `--mode test` makes a sandbox
 * key (`ck_test_`); the business's first one opens its test wallet with SANDBOX_WALLET_START.
 */
export const keyCreate = defineCommand({
  options: {
    business: { type: 'string' },
    scopes: { type: 'string' },
    mode: { type: 'string' },
  },
  prepare(flags) {
    const businessId = requiredUuid(flags, 'business')
    const scopes = requiredText(flags, 'scopes')
      .split(',')
      .map((scope) => scope.trim())
      .filter((scope) => scope !== '')
    if (scopes.length === 0) throw new OperatorInputError('--scopes must name at least one scope')
    for (const scope of scopes) {
      if (!isApiKeyScope(scope)) {
        throw new OperatorInputError(`unknown scope '${scope}'; known scopes: ${API_KEY_SCOPES.join(', ')}`)
      }
    }
    return { businessId, scopes: scopes.filter(isApiKeyScope), livemode: livemodeFlag(flags) }
  },
  async run({ sql, announce, config, actor }, input) {
    const key = await issueApiKey(sql, actor, input, toMinor(config.SANDBOX_WALLET_START))
    if (!key) throw new OperatorInputError(`business ${input.businessId} does not exist`)
    // A gateway that cached this hash as unknown must look again.
    await announce({ kind: 'api-key', keyHash: key.keyHash })
    return { key_id: key.keyId, api_key: key.apiKey, livemode: key.livemode }
  },
})
