import { randomBytes } from 'node:crypto'
import { z } from 'zod'
import { findBusiness } from '../db/businesses.js'
import { insertAudit } from '../db/audit.js'
import { deleteUserSessions } from '../db/console-sessions.js'
import {
  clearLoginFailures, disableConsoleUser, findConsoleUserByEmail, findPasswordTokenUser, insertConsoleUser, insertPasswordToken, setPasswordByToken,
  lockLoginFailuresOf, saveLoginFailuresOf, type ConsoleRole, type ConsoleUser,
} from '../db/console-users.js'
import { claimTry } from '../accounts/login-rule.js'
import { transactionNow, type Db, type Sql } from '../db/sql.js'
import { newUuid } from '../ids.js'
import { secretHash } from '../secret-hash.js'
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.js'

// DESIGN 12: a set-password link lasts 24 h (failed logins lock the account: LOGIN_RULE).
const LINK_VALID_S = 24 * 3600

const emailSchema = z.email({ error: 'must be an e-mail address' }).max(254)

export type UserCreation =
  | { kind: 'created'; user: ConsoleUser; link: string; expiresAt: Date }
  | { kind: 'invalid'; message: string }

/**
 * Creates a console user and the one-time link that sets its password: the one step the CLI
 * (`user:create`), the console and the demo seed share, audited as `user.create` by `actor`.
 * Only the link's hash is stored.
 */
export async function createConsoleUser(sql: Sql, actor: string, input: { email: string; role: ConsoleRole; businessId: string | null }, consoleUrl: string): Promise<UserCreation> {
  const email = emailSchema.safeParse(input.email.trim())
  if (!email.success) return { kind: 'invalid', message: `email ${email.error.issues[0].message}` }
  if ((input.role === 'business') !== (input.businessId !== null)) {
    return { kind: 'invalid', message: input.role === 'business' ? 'a business user needs --business' : 'an operator belongs to no business; leave out --business' }
  }
  return sql.begin(async (tx) => {
    if (input.businessId !== null && !(await findBusiness(tx, input.businessId))) {
      return { kind: 'invalid', message: `business ${input.businessId} does not exist` } satisfies UserCreation
    }
    const user = await insertConsoleUser(tx, { id: newUuid(), email: email.data, role: input.role, businessId: input.businessId })
    if (!user) return { kind: 'invalid', message: `a console user with email ${email.data} already exists` } satisfies UserCreation
    await insertAudit(tx, { actor, action: 'user.create', businessId: user.businessId, subject: user.email, before: null, after: { user_id: user.id, role: user.role } })
    const { link, expiresAt } = await issuePasswordLink(tx, user.id, consoleUrl)
    return { kind: 'created', user, link, expiresAt } satisfies UserCreation
  })
}

/** A fresh one-time link to set the user's password (24 h); the user's older unused links stop working. */
export async function issuePasswordLink(sql: Db, userId: string, consoleUrl: string): Promise<{ link: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url')
  const expiresAt = await insertPasswordToken(sql, secretHash(token), userId, LINK_VALID_S)
  return { link: `${consoleUrl}/console/set-password?token=${token}`, expiresAt }
}

export type PasswordLinkIssue = { kind: 'issued'; user: ConsoleUser; link: string; expiresAt: Date } | { kind: 'refused'; message: string }

/**
 * A new set-password link for a forgotten password, for an enabled user; audited as `user.link`
 * in the same transaction, without the link.
 */
export function issuePasswordLinkAs(sql: Sql, actor: string, email: string, consoleUrl: string): Promise<PasswordLinkIssue> {
  return sql.begin(async (tx): Promise<PasswordLinkIssue> => {
    const user = await findConsoleUserByEmail(tx, email.trim())
    if (!user) return { kind: 'refused', message: `no console user has email ${email}` }
    if (user.disabledAt) return { kind: 'refused', message: `console user ${user.email} is disabled` }
    const { link, expiresAt } = await issuePasswordLink(tx, user.id, consoleUrl)
    await insertAudit(tx, { actor, action: 'user.link', businessId: user.businessId, subject: user.email, before: null, after: { expires_at: expiresAt } })
    return { kind: 'issued', user, link, expiresAt }
  })
}

/** Who a link sets the password of, while it is usable. */
export function passwordLinkUser(sql: Sql, token: string): Promise<ConsoleUser | null> {
  return findPasswordTokenUser(sql, secretHash(token))
}

export type PasswordSetting = { kind: 'set'; userId: string } | { kind: 'invalid'; field: 'password' | 'confirm' | 'token'; message: string }

export async function setPassword(sql: Sql, token: string, password: string, confirm: string): Promise<PasswordSetting> {
  if (password.length < MIN_PASSWORD_LENGTH) return { kind: 'invalid', field: 'password', message: `Password must be at least ${MIN_PASSWORD_LENGTH} characters` }
  if (password.length > 1024) return { kind: 'invalid', field: 'password', message: 'Password must be at most 1024 characters' }
  if (password !== confirm) return { kind: 'invalid', field: 'confirm', message: 'The two passwords differ' }
  const passwordHash = await hashPassword(password)
  // A new password ends every session the old one opened.
  const userId = await sql.begin(async (tx) => {
    const set = await setPasswordByToken(tx, secretHash(token), passwordHash)
    if (set) await deleteUserSessions(tx, set)
    return set
  })
  return userId ? { kind: 'set', userId } : { kind: 'invalid', field: 'token', message: 'This link was used already or has expired; ask an operator for a new one' }
}

export type UserDisabling = { kind: 'disabled'; user: ConsoleUser; sessionsEnded: number } | { kind: 'no_user' }

/**
 * Disables a console user: every session ends and no login, link or session works for them
 * again; audited as `user.disable` (once: a repeat changes nothing). `businessId` narrows it to
 * one business's users; null for any.
 */
export function disableConsoleUserAs(sql: Sql, actor: string, userId: string, businessId: string | null): Promise<UserDisabling> {
  return sql.begin(async (tx) => {
    const user = await disableConsoleUser(tx, userId, businessId)
    if (!user) return { kind: 'no_user' } satisfies UserDisabling
    const sessionsEnded = await deleteUserSessions(tx, user.id)
    if (user.newly) await insertAudit(tx, { actor, action: 'user.disable', businessId: user.businessId, subject: user.email, before: { disabled: false }, after: { disabled_at: user.disabledAt, sessions_ended: sessionsEnded } })
    return { kind: 'disabled', user, sessionsEnded } satisfies UserDisabling
  })
}

/** "Log out everywhere": ends every session of the user, this one included. */
export function endSessionsOf(sql: Sql, userId: string): Promise<number> {
  return deleteUserSessions(sql, userId)
}

export type LoginOutcome = { kind: 'ok'; user: ConsoleUser } | { kind: 'refused' }

/**
 * Checks a login. The attempt is claimed (and counted) before the password is looked at, so
 * parallel guesses cannot outrun the lock. A wrong password, an unknown e-mail, a disabled or a
 * locked account are one outcome, at the cost of one scrypt each: the answer tells nobody which
 * e-mails exist.
 */
export async function logIn(sql: Sql, email: string, password: string): Promise<LoginOutcome> {
  const claim = await claimLoginTry(sql, email)
  const matches = await verifyPassword(password, claim?.user.passwordHash ?? null)
  if (!claim || !matches) return { kind: 'refused' }
  await clearLoginFailures(sql, claim.user.id, claim.lockedUntil)
  return { kind: 'ok', user: claim.user }
}

/**
 * Counts a login try against the account before its password is looked at (LOGIN_RULE), with
 * the lock this try set (the limit-th try locks, and is still checked). Null: no such user,
 * disabled, or locked, which the caller answers alike.
 */
export function claimLoginTry(sql: Sql, email: string): Promise<{ user: ConsoleUser; lockedUntil: Date | null } | null> {
  return sql.begin(async (tx) => {
    const user = await lockLoginFailuresOf(tx, email.trim())
    const claimed = user && claimTry(user, (await transactionNow(tx)).getTime())
    if (!user || !claimed) return null
    await saveLoginFailuresOf(tx, user.id, claimed)
    return { user, lockedUntil: claimed.lockedUntil }
  })
}

const DEMO_USERS = [
  { email: 'operator@example.com', role: 'operator' },
  { email: 'demo@example.com', role: 'business' },
] as const

/**
 * The demo operator and the demo business's user, made once. Each run of `npm start` prints a
 * fresh one-time link for a demo user whose password is not set yet, and no link once it is.
 */
export async function demoConsoleUsers(sql: Sql, businessId: string, consoleUrl: string): Promise<{ email: string; role: ConsoleRole; link: string | null }[]> {
  const users = []
  for (const demo of DEMO_USERS) {
    const existing = await findConsoleUserByEmail(sql, demo.email)
    if (!existing) {
      const created = await createConsoleUser(sql, 'demo:seed', { email: demo.email, role: demo.role, businessId: demo.role === 'business' ? businessId : null }, consoleUrl)
      users.push({ email: demo.email, role: demo.role, link: created.kind === 'created' ? created.link : null })
    } else {
      users.push({ email: demo.email, role: demo.role, link: existing.passwordHash ? null : (await issuePasswordLink(sql, existing.id, consoleUrl)).link })
    }
  }
  return users
}
