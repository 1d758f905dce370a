import { createConsoleUser } from '../../../shared/console/users.js'
import { defineCommand } from '../command.js'
import { requiredChoice, requiredText, requiredUuid } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `user:create`: a console user (DESIGN 12) and the one-time link, valid 24 h, that sets its
 * password. `--role business` needs `--business`; an operator has none.
 */
export const userCreate = defineCommand({
  options: {
    email: { type: 'string' },
    role: { type: 'string' },
    business: { type: 'string' },
  },
  prepare(flags) {
    const businessId = flags.business === undefined ? null : requiredUuid(flags, 'business')
    return { email: requiredText(flags, 'email'), role: requiredChoice(flags, 'role', ['operator', 'business'] as const), businessId }
  },
  async run({ sql, config, actor }, input) {
    const created = await createConsoleUser(sql, actor, input, config.CONSOLE_PUBLIC_URL)
    if (created.kind === 'invalid') throw new OperatorInputError(created.message)
    return { user_id: created.user.id, email: created.user.email, role: created.user.role, set_password_url: created.link, expires_at: created.expiresAt.toISOString() }
  },
})
