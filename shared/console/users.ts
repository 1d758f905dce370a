import { createHash, randomBytes } from 'node:crypto'
import { z } from 'zod'
import { findBusiness } from '../db/businesses.js'
import {
  clearLoginFailures, findConsoleUserByEmail, findPasswordTokenUser, insertConsoleUser, insertPasswordToken, recordLoginFailure, setPasswordByToken,
  type ConsoleRole, type ConsoleUser,
} from '../db/console-users.js'
import type { Db, Sql } from '../db/sql.js'
import { newUuid } from '../ids.js'
import { hashPassword, MIN_PASSWORD_LENGTH, verifyPassword } from './passwords.js'

// DESIGN 12: a set-password link lasts 24 h; 5 failed logins in 15 minutes lock the account for 15.
const LINK_VALID_S = 24 * 3600
export const LOGIN_RULE = { limit: 5, windowS: 15 * 60, lockS: 15 * 60 }

const emailSchema = z.email({ error: 'must be an e-mail address' }).max(254)

function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

export type UserCreation =
  | { kind: 'created'; user: ConsoleUser; link: string; expiresAt: Date }
  | { kind: 'invalid'; message: string }

/**
 * Creates a console user and the one-time link that sets its password: the one step the CLI
 * (`user:create`) and the demo seed share. Only the link's hash is stored.
 */
export async function createConsoleUser(sql: Sql, input: { email: string; role: ConsoleRole; businessId: string | null }, consoleUrl: string): Promise<UserCreation> {
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
    const { link, expiresAt } = await issuePasswordLink(tx, user.id, consoleUrl)
    return { kind: 'created', user, link, expiresAt } satisfies UserCreation
  })
}

/** A fresh one-time link to set the user's password (24 h). */
export async function issuePasswordLink(sql: Db, userId: string, consoleUrl: string): Promise<{ link: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url')
  const expiresAt = await insertPasswordToken(sql, hashToken(token), userId, LINK_VALID_S)
  return { link: `${consoleUrl}/console/set-password?token=${token}`, expiresAt }
}

/** Who a link sets the password of, while it is usable. */
export function passwordLinkUser(sql: Sql, token: string): Promise<ConsoleUser | null> {
  return findPasswordTokenUser(sql, hashToken(token))
}

export type PasswordSetting = { kind: 'set'; userId: string } | { kind: 'invalid'; field: 'password' | 'confirm' | 'token'; message: string }

export async function setPassword(sql: Sql, token: string, password: string, confirm: string): Promise<PasswordSetting> {
  if (password.length < MIN_PASSWORD_LENGTH) return { kind: 'invalid', field: 'password', message: `Password must be at least ${MIN_PASSWORD_LENGTH} characters` }
  if (password.length > 1024) return { kind: 'invalid', field: 'password', message: 'Password must be at most 1024 characters' }
  if (password !== confirm) return { kind: 'invalid', field: 'confirm', message: 'The two passwords differ' }
  const passwordHash = await hashPassword(password)
  const userId = await sql.begin((tx) => setPasswordByToken(tx, hashToken(token), passwordHash))
  return userId ? { kind: 'set', userId } : { kind: 'invalid', field: 'token', message: 'This link was used already or has expired; ask an operator for a new one' }
}

export type LoginOutcome =
  | { kind: 'ok'; user: ConsoleUser }
  | { kind: 'wrong' }
  | { kind: 'locked'; until: Date }

/**
 * Checks a login. A locked account is refused before its password is looked at; an unknown
 * e-mail costs the same scrypt as a known one and answers the same as a wrong password.
 */
export async function logIn(sql: Sql, email: string, password: string): Promise<LoginOutcome> {
  const user = await findConsoleUserByEmail(sql, email.trim())
  if (user?.lockedUntil && user.lockedUntil > new Date()) {
    return { kind: 'locked', until: user.lockedUntil }
  }
  const matches = await verifyPassword(password, user?.passwordHash ?? null)
  if (!user) return { kind: 'wrong' }
  if (!matches) {
    const lockedUntil = await recordLoginFailure(sql, user.id, LOGIN_RULE)
    return lockedUntil ? { kind: 'locked', until: lockedUntil } : { kind: 'wrong' }
  }
  await clearLoginFailures(sql, user.id)
  return { kind: 'ok', user }
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
      const created = await createConsoleUser(sql, { email: demo.email, role: demo.role, businessId: demo.role === 'business' ? businessId : null }, consoleUrl)
      users.push({ email: demo.email, role: demo.role, link: created.kind === 'created' ? created.link : null })
    } else {
      users.push({ email: demo.email, role: demo.role, link: existing.passwordHash ? null : (await issuePasswordLink(sql, existing.id, consoleUrl)).link })
    }
  }
  return users
}
