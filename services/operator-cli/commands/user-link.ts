import { issuePasswordLinkAs } from '../../../shared/console/users.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `user:link`: a new one-time link (24 h) that sets the console user's password, for a forgotten
 * one; the user's older unused links stop working. A disabled user gets none. Audited as `user.link`.
 */
export const userLink = defineCommand({
  options: {
    email: { type: 'string' },
  },
  prepare(flags) {
    return { email: requiredText(flags, 'email', 254) }
  },
  async run({ sql, config, actor }, input) {
    const issue = await issuePasswordLinkAs(sql, actor, input.email, config.CONSOLE_PUBLIC_URL)
    if (issue.kind === 'refused') throw new OperatorInputError(issue.message)
    return { user_id: issue.user.id, email: issue.user.email, set_password_url: issue.link, expires_at: issue.expiresAt.toISOString() }
  },
})
