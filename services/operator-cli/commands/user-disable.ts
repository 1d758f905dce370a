import { disableConsoleUserAs } from '../../../shared/console/users.js'
import { findConsoleUserByEmail } from '../../../shared/db/console-users.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `user:disable`: the console user can no longer log in, use a set-password link or a session;
 * every session of theirs ends now. Idempotent; audited once.
 */
export const userDisable = defineCommand({
  options: {
    email: { type: 'string' },
  },
  prepare(flags) {
    return { email: requiredText(flags, 'email', 254) }
  },
  async run({ sql, actor }, input) {
    const user = await findConsoleUserByEmail(sql, input.email.trim())
    const disabled = user ? await disableConsoleUserAs(sql, actor, user.id, null) : { kind: 'no_user' as const }
    if (disabled.kind === 'no_user') throw new OperatorInputError(`no console user has email ${input.email}`)
    return { user_id: disabled.user.id, email: disabled.user.email, disabled_at: disabled.user.disabledAt?.toISOString() ?? null, sessions_ended: disabled.sessionsEnded }
  },
})
