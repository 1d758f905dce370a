import type { LoginFailures } from '../courier.js'
import type { Db, Tx } from './sql.js'

export type ConsoleRole = 'operator' | 'business'

/** A console user; `businessId` is set exactly for the business role. */
export interface ConsoleUser {
  id: string
  email: string
  role: ConsoleRole
  businessId: string | null
  passwordHash: string | null
  lockedUntil: Date | null
  disabledAt: Date | null
}

const USER_COLUMNS = 'id, email, role, business_id, password_hash, locked_until, disabled_at'

/** Null when the e-mail is taken (case-insensitively). */
export async function insertConsoleUser(db: Db, user: Pick<ConsoleUser, 'id' | 'email' | 'role' | 'businessId'>): Promise<ConsoleUser | null> {
  const [row] = await db<ConsoleUser[]>`
    insert into console_users (id, email, role, business_id) values (${user.id}, ${user.email}, ${user.role}, ${user.businessId})
    on conflict do nothing
    returning ${db.unsafe(USER_COLUMNS)}`
  return row ?? null
}

/** A user a session may act as: a disabled user is nobody. */
export async function findConsoleUser(db: Db, id: string): Promise<ConsoleUser | null> {
  const [row] = await db<ConsoleUser[]>`select ${db.unsafe(USER_COLUMNS)} from console_users where id = ${id} and disabled_at is null`
  return row ?? null
}

export async function findConsoleUserByEmail(db: Db, email: string): Promise<ConsoleUser | null> {
  const [row] = await db<ConsoleUser[]>`select ${db.unsafe(USER_COLUMNS)} from console_users where lower(email) = lower(${email})`
  return row ?? null
}

/** A business's console users, oldest first. */
export async function listConsoleUsers(db: Db, businessId: string): Promise<ConsoleUser[]> {
  return db<ConsoleUser[]>`select ${db.unsafe(USER_COLUMNS)} from console_users where business_id = ${businessId} order by created_at`
}

/** An enabled user's row by e-mail (any case) with its wrong tries, locked for the rest of the transaction. */
export async function lockLoginFailuresOf(tx: Tx, email: string): Promise<(ConsoleUser & LoginFailures) | null> {
  const [row] = await tx<(ConsoleUser & LoginFailures)[]>`
    select ${tx.unsafe(USER_COLUMNS)}, failed_login_times from console_users
    where lower(email) = lower(${email}) and disabled_at is null
    for update`
  return row ?? null
}

export async function saveLoginFailuresOf(tx: Tx, userId: string, failures: LoginFailures): Promise<void> {
  await tx`
    update console_users set failed_login_times = ${tx.array(failures.failedLoginTimes)}, locked_until = ${failures.lockedUntil}
    where id = ${userId}`
}

/** Marks the user disabled (idempotent); null when there is no such user (of `businessId`, when given). `newly` is false on a repeat. */
export async function disableConsoleUser(db: Db, id: string, businessId: string | null): Promise<(ConsoleUser & { newly: boolean }) | null> {
  const [row] = await db<(ConsoleUser & { newly: boolean })[]>`
    update console_users set disabled_at = coalesce(disabled_at, now())
    where id = ${id} ${businessId === null ? db`` : db`and business_id = ${businessId}`}
    returning ${db.unsafe(USER_COLUMNS)}, disabled_at = now() as newly`
  return row ?? null
}

/**
 * After a right password: the failures are forgotten, and the lock its own try set (`ownLock`),
 * but not one racing guesses set while it was checked: lifted, it would give them more tries in
 * the same 15 minutes.
 */
export async function clearLoginFailures(db: Db, userId: string, ownLock: Date | null): Promise<void> {
  await db`
    update console_users set failed_login_times = '{}', locked_until = null
    where id = ${userId} and (locked_until is null or locked_until <= now() or locked_until = ${ownLock})`
}

/** A new link for the user; every older unused link of theirs stops working with it. */
export async function insertPasswordToken(db: Db, tokenHash: string, userId: string, validS: number): Promise<Date> {
  await db`update console_password_tokens set used_at = now() where user_id = ${userId} and used_at is null`
  const [row] = await db<{ expiresAt: Date }[]>`
    insert into console_password_tokens (token_hash, user_id, expires_at) values (${tokenHash}, ${userId}, now() + make_interval(secs => ${validS}))
    returning expires_at`
  return row.expiresAt
}

/** The user a link is for, while it is unused and unexpired. */
export async function findPasswordTokenUser(db: Db, tokenHash: string): Promise<ConsoleUser | null> {
  const [row] = await db<ConsoleUser[]>`
    select ${db.unsafe(USER_COLUMNS)} from console_users
    where id = (select user_id from console_password_tokens where token_hash = ${tokenHash} and used_at is null and expires_at > now())
      and disabled_at is null`
  return row ?? null
}

/**
 * Uses the link once and sets the password in the same transaction; null when the link is
 * spent, expired or its user disabled. Any other link of the user's is spent with it.
 */
export async function setPasswordByToken(tx: Tx, tokenHash: string, passwordHash: string): Promise<string | null> {
  const [token] = await tx<{ userId: string }[]>`
    update console_password_tokens t set used_at = now()
    from console_users u
    where t.token_hash = ${tokenHash} and t.used_at is null and t.expires_at > now() and u.id = t.user_id and u.disabled_at is null
    returning t.user_id`
  if (!token) return null
  await tx`update console_password_tokens set used_at = now() where user_id = ${token.userId} and used_at is null`
  await tx`
    update console_users set password_hash = ${passwordHash}, failed_login_times = '{}', locked_until = null
    where id = ${token.userId}`
  return token.userId
}
