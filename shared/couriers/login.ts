import { createHash, randomBytes, randomInt } from 'node:crypto'
import { claimTry, LOGIN_RULE } from '../accounts/login-rule.js'
import type { CourierRow } from '../db/couriers.js'
import {
  clearLoginFailures, deleteCourierSession, deleteSpentLoginFailures, findCourierSession, findCouriersWithCode, insertCourierSession, lockLoginFailures, saveLoginFailures, takeLoginCode,
  updateCourierSession, upsertLoginCode, type CourierSessionRow,
} from '../db/courier-logins.js'
import { transactionNow, type Db, type Sql } from '../db/sql.js'
import { drainInBatches } from '../drain.js'
import { e164Phone } from '../phone.js'
import { secretHash } from '../secret-hash.js'

// How a rider logs in to the courier web app (DESIGN 14): the operator hands them a 6-digit code
// (`courier:create`, `courier:code`), good once and for COURIER_CODE_TTL_MIN minutes; phone and
// code open a session of their own. Five wrong codes for one phone within any 15 minutes lock that
// phone's logins for 15: the console's rule for an account (LOGIN_RULE). A phone is matched and
// locked in its stored E.164 form, however the rider writes it.

/** The code is tied to its courier: the same six digits of two couriers hash apart. */
function codeHash(courierId: string, code: string): string {
  return createHash('sha256').update(`courier-login-code\0${courierId}\0${code}`, 'utf8').digest('hex')
}

/** A fresh code for the courier, shown once; their older code stops working. */
export async function issueLoginCode(db: Db, courierId: string, validMin: number): Promise<{ code: string; expiresAt: Date }> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0')
  const expiresAt = await upsertLoginCode(db, courierId, codeHash(courierId, code), Math.round(validMin * 60))
  return { code, expiresAt }
}

export type CourierLogin = { kind: 'ok'; courier: CourierRow } | { kind: 'refused' }

/**
 * Checks a phone and code. The try is counted against the phone before the code is looked at,
 * so parallel guesses cannot outrun the lock; an unknown phone counts like a known one, and every
 * refusal (wrong, used or expired code, unknown or disabled courier, locked phone) is one outcome.
 */
export async function logInCourier(sql: Sql, phoneInput: string, code: string): Promise<CourierLogin> {
  // The stored form (E.164): `0800 000 0001` and `+234 800 000 0001` are one phone, to match and to lock.
  const phone = e164Phone(phoneInput)
  if (phone === null || !/^\d{6}$/.test(code)) return { kind: 'refused' }
  const claimed = await sql.begin(async (tx) => {
    const current = await lockLoginFailures(tx, phone)
    const claim = claimTry(current, (await transactionNow(tx)).getTime())
    if (claim) await saveLoginFailures(tx, phone, claim)
    return claim
  })
  if (!claimed) return { kind: 'refused' }
  const candidates = await findCouriersWithCode(sql, phone)
  // Asked even when no courier has the phone: an unknown phone takes as long as a wrong code.
  const courierId = await takeLoginCode(sql, candidates.map((courier) => codeHash(courier.id, code)))
  const courier = candidates.find((candidate) => candidate.id === courierId)
  if (!courier) return { kind: 'refused' }
  await clearLoginFailures(sql, phone, claimed.lockedUntil)
  return { kind: 'ok', courier }
}

const FORGET_BATCH = 1000

/** For the console's sweep: forgets the phones the rule no longer counts a try against, a batch a statement; how many. */
export function forgetSpentLoginFailures(db: Db): Promise<number> {
  return drainInBatches(FORGET_BATCH, (limit) => deleteSpentLoginFailures(db, LOGIN_RULE.windowS, limit))
}

// Sessions: the cookie holds a random id; the database only its hash.


/** A new session for the courier; returns the id for the cookie. */
export async function startCourierSession(db: Db, courierId: string, validS: number): Promise<string> {
  const id = randomBytes(32).toString('base64url')
  await insertCourierSession(db, secretHash(id), courierId, validS)
  return id
}

/** The live session of an enabled courier, or null. */
export function findCourierSessionById(db: Db, id: string): Promise<CourierSessionRow | null> {
  return findCourierSession(db, secretHash(id))
}

export function changeCourierSession(db: Db, id: string, change: Parameters<typeof updateCourierSession>[2]): Promise<void> {
  return updateCourierSession(db, secretHash(id), change)
}

export function endCourierSession(db: Db, id: string): Promise<void> {
  return deleteCourierSession(db, secretHash(id))
}
