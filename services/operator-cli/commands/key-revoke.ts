import { revokeKeyAs } from '../../../shared/accounts/operator-actions.js'
import { defineCommand } from '../command.js'
import { requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** `key:revoke`: idempotent; a second revoke reports the first revocation time. */
export const keyRevoke = defineCommand({
  options: {
    'key-id': { type: 'string' },
  },
  prepare(flags) {
    return { keyId: requiredUuid(flags, 'key-id') }
  },
  async run({ sql, announce, actor }, input) {
    const revoked = await revokeKeyAs(sql, actor, input.keyId, null)
    if (!revoked) throw new OperatorInputError(`API key ${input.keyId} does not exist`)
    // Gateways drop the cached key now rather than letting it work until the cache TTL.
    await announce({ kind: 'api-key', keyHash: revoked.keyHash })
    return { key_id: revoked.keyId, revoked_at: revoked.revokedAt.toISOString() }
  },
})
