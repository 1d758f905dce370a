import { createApiKey } from '../../../shared/accounts/api-keys.js'
import { API_KEY_SCOPES, isApiKeyScope } from '../../../shared/db/api-keys.js'
import { findBusiness } from '../../../shared/db/businesses.js'
import { defineCommand } from '../command.js'
import { requiredText, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `key:create`: the key is printed once; only its hash is stored. */
export const keyCreate = defineCommand({
  options: {
    business: { type: 'string' },
    scopes: { type: 'string' },
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
    return { businessId, scopes: scopes.filter(isApiKeyScope) }
  },
  async run({ sql, announce }, input) {
    const key = await sql.begin(async (tx) => {
      if (!(await findBusiness(tx, input.businessId))) {
        throw new OperatorInputError(`business ${input.businessId} does not exist`)
      }
      return createApiKey(tx, input.businessId, input.scopes)
    })
    // A gateway that cached this hash as unknown must look again.
    await announce({ kind: 'api-key', keyHash: key.keyHash })
    return { key_id: key.keyId, api_key: key.apiKey }
  },
})
