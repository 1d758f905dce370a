import type { CourierRow } from './couriers.js'
import type { LoginFailures } from '../courier.js'
import type { Db, Tx } from './sql.js'

// The courier web app's logins (DESIGN 14): one-time codes, wrong tries per phone, and sessions.

const COURIER_COLUMNS = ['id', 'name', 'phone', 'vehicle_type', 'vehicle_plate', 'max_weight_kg::float8 as max_weight_kg', 'disabled_at', 'created_at']
const courierColumns = (alias: string) => COURIER_COLUMNS.map((column) => `${alias}.${column}`).join(', ')

/** The courier's one live code: a new one replaces the last. */
export async function upsertLoginCode(db: Db, courierId: string, codeHash: string, validS: number): Promise<Date> {
  const [row] = await db<{ expiresAt: Date }[]>`
    insert into courier_login_codes (courier_id, code_hash, expires_at) values (${courierId}, ${codeHash}, now() + make_interval(secs => ${validS}))
    on conflict (courier_id) do update set code_hash = excluded.code_hash, expires_at = excluded.expires_at, created_at = now()
    returning expires_at`
  return row.expiresAt
}

/** Enabled couriers with a live code whose phone (stored E.164) is `phone`: one, but for couriers migration 00023 found sharing it. */
export async function findCouriersWithCode(db: Db, phone: string): Promise<CourierRow[]> {
  return db<CourierRow[]>`
    select ${db.unsafe(courierColumns('c'))} from couriers c join courier_login_codes k on k.courier_id = c.id
    where c.phone = ${phone} and c.disabled_at is null and k.expires_at > now()`
}

/** Spends a live code, once: the courier whose code it was, or null. */
export async function takeLoginCode(db: Db, codeHashes: string[]): Promise<string | null> {
  const [row] = await db<{ courierId: string }[]>`
    delete from courier_login_codes where code_hash = any(${codeHashes}) and expires_at > now() returning courier_id`
  return row?.courierId ?? null
}

export async function deleteLoginCode(db: Db, courierId: string): Promise<void> {
  await db`delete from courier_login_codes where courier_id = ${courierId}`
}

/**
 * The phone's wrong tries, locked for the rest of the transaction (a new phone starts at none).
 * One statement: a sweep that forgets the row between a create and a read cannot leave the try
 * without one.
 */
export async function lockLoginFailures(tx: Tx, phone: string): Promise<LoginFailures> {
  const [row] = await tx<LoginFailures[]>`
    insert into courier_login_failures (phone) values (${phone})
    on conflict (phone) do update set locked_until = courier_login_failures.locked_until
    returning failed_login_times, locked_until`
  return row
}

export async function saveLoginFailures(tx: Tx, phone: string, failures: LoginFailures): Promise<void> {
  await tx`
    update courier_login_failures set failed_login_times = ${tx.array(failures.failedLoginTimes)}, locked_until = ${failures.lockedUntil}
    where phone = ${phone}`
}

/** After a right code: the failures are forgotten, and the lock its own try set (`ownLock`), but not one racing guesses set meanwhile. */
export async function clearLoginFailures(db: Db, phone: string, ownLock: Date | null): Promise<void> {
  await db`delete from courier_login_failures where phone = ${phone} and (locked_until is null or locked_until <= now() or locked_until = ${ownLock})`
}

/**
 * Forgets up to `limit` phones whose lock, if any, is over and whose every wrong try is older than
 * `windowS`: rows the login rule reads as no row. Any phone typed makes one, so without this the
 * table grows with every number ever guessed. One being tried (its row locked) is left; how many.
 */
export async function deleteSpentLoginFailures(db: Db, windowS: number, limit: number): Promise<number> {
  const rows = await db`
    delete from courier_login_failures where phone in (
      select phone from courier_login_failures
      where (locked_until is null or locked_until <= now())
        and not exists (select from unnest(failed_login_times) as tried(at) where tried.at > now() - make_interval(secs => ${windowS}))
      limit ${limit} for update skip locked)
    returning phone`
  return rows.length
}

export interface CourierSessionRow {
  courier: CourierRow
  flash: { kind: 'ok' | 'error'; text: string } | null
  expiresAt: Date
}

export async function insertCourierSession(db: Db, idHash: string, courierId: string, validS: number): Promise<void> {
  await db`insert into courier_sessions (id_hash, courier_id, expires_at) values (${idHash}, ${courierId}, now() + make_interval(secs => ${validS}))`
}

/** A live session of an enabled courier, with its courier. */
export async function findCourierSession(db: Db, idHash: string): Promise<CourierSessionRow | null> {
  const [row] = await db<(CourierRow & { flash: CourierSessionRow['flash']; sessionExpiresAt: Date })[]>`
    select ${db.unsafe(courierColumns('c'))}, s.flash, s.expires_at as session_expires_at
    from courier_sessions s join couriers c on c.id = s.courier_id
    where s.id_hash = ${idHash} and s.expires_at > now() and c.disabled_at is null`
  if (!row) return null
  const { flash, sessionExpiresAt, ...courier } = row
  return { courier, flash, expiresAt: sessionExpiresAt }
}

/** Sets (or, with null, clears) the message the next page shows; a new expiry with it when given. */
export async function updateCourierSession(db: Db, idHash: string, change: { flash?: CourierSessionRow['flash']; validS?: number }): Promise<void> {
  await db`
    update courier_sessions set
      flash = ${change.flash === undefined ? db`flash` : db`${change.flash === null ? null : JSON.stringify(change.flash)}::text::jsonb`},
      expires_at = ${change.validS === undefined ? db`expires_at` : db`now() + make_interval(secs => ${change.validS})`}
    where id_hash = ${idHash}`
}

export async function deleteCourierSession(db: Db, idHash: string): Promise<void> {
  await db`delete from courier_sessions where id_hash = ${idHash}`
}

/** Ends every session of the courier (disabled); returns how many. */
export async function deleteCourierSessions(db: Db, courierId: string): Promise<number> {
  const rows = await db`delete from courier_sessions where courier_id = ${courierId} returning id_hash`
  return rows.length
}

export async function deleteExpiredCourierSessions(db: Db): Promise<number> {
  const rows = await db`delete from courier_sessions where expires_at <= now() returning id_hash`
  return rows.length
}
