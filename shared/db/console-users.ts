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

/**
 * Claims one login attempt, atomically, before the password is looked at: the attempt counts
 * as a failure until the password proves right (`clearLoginFailures`). The `limit`-th attempt
 * within `windowS` seconds locks the account for `lockS` seconds, so however many attempts run
 * at once, at most `limit` passwords are checked per window. Null: no such user, disabled, or
 * locked (the caller answers all three alike).
 */
export async function claimLoginAttempt(db: Db, email: string, rule: { limit: number; windowS: number; lockS: number }): Promise<ConsoleUser | null> {
  const [row] = await db<ConsoleUser[]>`
    with counted as (
      select id,
        case when failures_since > now() - make_interval(secs => ${rule.windowS}) then failed_logins + 1 else 1 end as failures,
        case when failures_since > now() - make_interval(secs => ${rule.windowS}) then failures_since else now() end as since
      from console_users
      where lower(email) = lower(${email}) and disabled_at is null and (locked_until is null or locked_until <= now())
      for update)
    update console_users u set
      failed_logins = case when c.failures >= ${rule.limit} then 0 else c.failures end,
      failures_since = case when c.failures >= ${rule.limit} then null else c.since end,
      locked_until = case when c.failures >= ${rule.limit} then now() + make_interval(secs => ${rule.lockS}) else null end
    from counted c where u.id = c.id
    returning ${db.unsafe(USER_COLUMNS.split(', ').map((column) => `u.${column}`).join(', '))}`
  return row ?? null
}

/** Marks the user disabled (idempotent); null when there is no such user (of `businessId`, when given). `newly` is false on a repeat. */
export async function disableConsoleUser(db: Db, id: string, businessId: string | null): Promise<(ConsoleUser & { newly: boolean }) | null> {
  const [row] = await db<(ConsoleUser & { newly: boolean })[]>`
    update console_users set disabled_at = coalesce(disabled_at, now())
    where id = ${id} ${businessId === null ? db`` : db`and business_id = ${businessId}`}
    returning ${db.unsafe(USER_COLUMNS)}, disabled_at = now() as newly`
  return row ?? null
}

export async function clearLoginFailures(db: Db, userId: string): Promise<void> {
  await db`update console_users set failed_logins = 0, failures_since = null, locked_until = null where id = ${userId}`
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
    update console_users set password_hash = ${passwordHash}, failed_logins = 0, failures_since = null, locked_until = null
    where id = ${token.userId}`
  return token.userId
}
