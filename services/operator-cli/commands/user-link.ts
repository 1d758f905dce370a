import { issuePasswordLink } from '../../../shared/console/users.js'
import { findConsoleUserByEmail } from '../../../shared/db/console-users.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `user:link`: a new one-time link (24 h) that sets the console user's password, for a forgotten
 * one; the user's older unused links stop working. A disabled user gets none.
 */
export const userLink = defineCommand({
  options: {
    email: { type: 'string' },
  },
  prepare(flags) {
    return { email: requiredText(flags, 'email', 254) }
  },
  async run({ sql, config }, input) {
    const user = await findConsoleUserByEmail(sql, input.email.trim())
    if (!user) throw new OperatorInputError(`no console user has email ${input.email}`)
    if (user.disabledAt) throw new OperatorInputError(`console user ${user.email} is disabled`)
    const { link, expiresAt } = await sql.begin((tx) => issuePasswordLink(tx, user.id, config.CONSOLE_PUBLIC_URL))
    return { user_id: user.id, email: user.email, set_password_url: link, expires_at: expiresAt.toISOString() }
  },
})
