import type { LoginFailures } from '../courier.js'

// DESIGN 12: five failed logins within any 15 minutes lock a console account for 15. A courier's
// phone in the courier web app is locked by the same rule (DESIGN 14).
export const LOGIN_RULE = { limit: 5, windowS: 15 * 60, lockS: 15 * 60 }

/**
 * Claims one try under the rule, before the secret is looked at: null while locked (no try), else
 * what to save, which counts this try as failed until the secret proves right. The window slides:
 * a try counts the failures of the 15 minutes before it, wherever they fall. The limit-th try
 * within it is still checked, and locks for the next ones. The caller holds the row locked from
 * its read to its save, so however many tries race, at most `limit` are checked. `now` is the
 * database's clock once the row is locked (`transactionNow`), the one clock every pod shares, so
 * the window is 15 minutes whichever pod counts a try.
 */
export function claimTry(current: LoginFailures, now: number): LoginFailures | null {
  if (current.lockedUntil !== null && current.lockedUntil.getTime() > now) return null
  const windowStart = now - LOGIN_RULE.windowS * 1000
  const failedLoginTimes = [...current.failedLoginTimes.filter((at) => at.getTime() > windowStart), new Date(now)]
  // The lock lasts no less than the window, so the failures it clears could not count after it anyway.
  if (failedLoginTimes.length >= LOGIN_RULE.limit) return { failedLoginTimes: [], lockedUntil: new Date(now + LOGIN_RULE.lockS * 1000) }
  return { failedLoginTimes, lockedUntil: null }
}
