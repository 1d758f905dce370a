import { insertAudit } from '../db/audit.js'
import { deleteCourierSessions, deleteLoginCode } from '../db/courier-logins.js'
import { disableCourierRow, findActiveOrderIdsOfCourier, findCourier, findEnabledCourierByPhone, insertCourier, insertCourierToken, updateCourierPhone, type CourierRow } from '../db/couriers.js'
import { withdrawOffersOfCourier } from '../db/offers.js'
import { PG, type Db, type Sql, type Tx } from '../db/sql.js'
import { DEFAULT_MAX_WEIGHT_KG, type CourierVehicleType } from '../courier.js'
import { newCourierToken, newUuid } from '../ids.js'
import type { Invalidation } from '../invalidation.js'
import { changeOrder, countWithdrawn, type OrderChangeOutcome } from '../orders/change.js'
import { PHONE_RULE, e164Phone } from '../phone.js'
import { secretHash } from '../secret-hash.js'

// Couriers as the operator manages them (DESIGN 14): created with a token shown once, more tokens
// on request, disabled with every token and every order not yet picked up handed back.

const DISPLAY_PREFIX_LENGTH = 12
/** Why a disabled courier's offers were withdrawn and their orders handed back (the order's history says it). */
const DISABLED_REASON = 'courier disabled'

/** Issues a token for the courier; only its SHA-256 is stored, as for API keys. */
export async function issueCourierToken(db: Db, courierId: string): Promise<{ token: string; tokenHash: string }> {
  const token = newCourierToken()
  const tokenHash = secretHash(token)
  await insertCourierToken(db, { id: newUuid(), courierId, tokenHash, displayPrefix: token.slice(0, DISPLAY_PREFIX_LENGTH) })
  return { token, tokenHash }
}

export type CourierIssue<T> = { kind: 'issued'; courier: CourierRow; issued: T } | { kind: 'refused'; message: string }

/**
 * Something an enabled courier signs in with (another token, a login code), issued by `issue` and
 * audited as `action` in one transaction. The audit row names the courier, never what was
 * issued: the trail outlives every credential.
 */
export function issueToCourier<T>(sql: Sql, actor: string, courierId: string, action: string, issue: (tx: Tx, courier: CourierRow) => Promise<T>): Promise<CourierIssue<T>> {
  return sql.begin(async (tx): Promise<CourierIssue<T>> => {
    const courier = await findCourier(tx, courierId)
    if (!courier) return { kind: 'refused', message: `courier ${courierId} does not exist` }
    if (courier.disabledAt) return { kind: 'refused', message: `courier ${courierId} is disabled` }
    const issued = await issue(tx, courier)
    await insertAudit(tx, { actor, action, businessId: null, subject: courier.id, before: null, after: null })
    return { kind: 'issued', courier, issued }
  })
}

export interface NewCourier {
  name: string
  phone: string
  vehicleType: CourierVehicleType
  vehiclePlate: string | null
  maxWeightKg: number | null
}

export type CourierCreation =
  | { kind: 'created'; courier: CourierRow; token: string }
  | { kind: 'invalid'; message: string }

/** The refusal of a phone an enabled courier already has: the lock on wrong codes and the login are per phone. */
export function phoneTakenMessage(phone: string, holder: Pick<CourierRow, 'id' | 'name'>): string {
  return `phone ${phone} is already courier ${holder.id}'s (${holder.name}); disable that courier first or give another number`
}

/**
 * A courier and their first token, audited as `courier.create`. The phone is stored in its E.164
 * form (shared/phone.ts), and one enabled courier has it at most: the database's partial
 * unique index settles two creations at once.
 */
export async function createCourier(sql: Sql, actor: string, input: NewCourier): Promise<CourierCreation> {
  const phone = e164Phone(input.phone)
  if (phone === null) return { kind: 'invalid', message: notAPhone(input.phone) }
  try {
    return await sql.begin(async (tx) => {
      const holder = await findEnabledCourierByPhone(tx, phone)
      if (holder) return { kind: 'invalid', message: phoneTakenMessage(phone, holder) } satisfies CourierCreation
      const courier = await insertCourier(tx, {
        id: newUuid(), name: input.name, phone, vehicleType: input.vehicleType, vehiclePlate: input.vehiclePlate,
        maxWeightKg: input.maxWeightKg ?? DEFAULT_MAX_WEIGHT_KG[input.vehicleType],
      })
      const { token } = await issueCourierToken(tx, courier.id)
      await insertAudit(tx, { actor, action: 'courier.create', businessId: null, subject: courier.id, before: null, after: { vehicle_type: courier.vehicleType, max_weight_kg: courier.maxWeightKg } })
      return { kind: 'created', courier, token } satisfies CourierCreation
    })
  } catch (err) {
    if (!isPhoneTaken(err)) throw err
    return { kind: 'invalid', message: await takenMeanwhile(sql, phone) }
  }
}

export type PhoneChange =
  | { kind: 'changed'; courier: CourierRow }
  | { kind: 'invalid'; message: string }
  | { kind: 'not_found' }

/**
 * A courier's new phone (a rider's new number, or one the phone migration could not read), by the
 * same rule and the same one-enabled-courier-a-phone as a creation; audited as `courier.phone`
 * (without the numbers: the audit trail outlives them).
 */
export async function changeCourierPhone(sql: Sql, actor: string, courierId: string, typed: string): Promise<PhoneChange> {
  const phone = e164Phone(typed)
  if (phone === null) return { kind: 'invalid', message: notAPhone(typed) }
  try {
    return await sql.begin(async (tx) => {
      const holder = await findEnabledCourierByPhone(tx, phone)
      if (holder && holder.id !== courierId) return { kind: 'invalid', message: phoneTakenMessage(phone, holder) } satisfies PhoneChange
      const courier = await updateCourierPhone(tx, courierId, phone)
      if (!courier) return { kind: 'not_found' } satisfies PhoneChange
      await insertAudit(tx, { actor, action: 'courier.phone', businessId: null, subject: courierId, before: null, after: null })
      return { kind: 'changed', courier } satisfies PhoneChange
    })
  } catch (err) {
    if (!isPhoneTaken(err)) throw err
    return { kind: 'invalid', message: await takenMeanwhile(sql, phone) }
  }
}

const notAPhone = (typed: string) => `phone must be ${PHONE_RULE}, got '${typed}'`

/** The refusal when another courier took the phone between the check and the write: who has it now. */
async function takenMeanwhile(sql: Sql, phone: string): Promise<string> {
  const holder = await findEnabledCourierByPhone(sql, phone)
  return holder ? phoneTakenMessage(phone, holder) : `phone ${phone} is already an enabled courier's`
}

/** Another creation with the same phone committed between the check and the insert. */
function isPhoneTaken(err: unknown): boolean {
  const pgError = err as { code?: string; constraint_name?: string }
  return pgError.code === PG.uniqueViolation && pgError.constraint_name === 'couriers_phone_enabled'
}

export type CourierDisabling =
  | { kind: 'disabled'; courier: CourierRow; tokenHashes: string[]; sessionsEnded: number; handedBack: OrderChangeOutcome[]; withdrawnOrderIds: string[]; keptOrderIds: string[] }
  | { kind: 'no_courier' }

/**
 * Disables a courier: every token revoked, every web-app session ended, any login code void, and
 * their pending offer withdrawn at once; each `assigned` order goes back to `created` (reason
 * `courier disabled`) through the state machine; an order already picked up stays with them and
 * is listed for the operator. The caller tells the gateways (token hashes) and dispatch (the
 * orders handed back and those whose offer was withdrawn, to offer to the next courier now).
 */
export async function disableCourier(sql: Sql, actor: string, courierId: string): Promise<CourierDisabling> {
  const before = await findCourier(sql, courierId)
  if (!before) return { kind: 'no_courier' }
  const disabled = await sql.begin(async (tx) => {
    const row = await disableCourierRow(tx, courierId)
    if (!row) return null
    const withdrawn = await withdrawOffersOfCourier(tx, courierId, DISABLED_REASON)
    const sessionsEnded = await deleteCourierSessions(tx, courierId)
    await deleteLoginCode(tx, courierId)
    // Disabling again (a retry that hands back what a first run left) is no new operator action.
    if (before.disabledAt === null) {
      await insertAudit(tx, { actor, action: 'courier.disable', businessId: null, subject: courierId, before: { disabled_at: null }, after: { disabled_at: row.courier.disabledAt?.toISOString() ?? null, tokens_revoked: row.tokenHashes.length, sessions_ended: sessionsEnded } })
    }
    return { ...row, sessionsEnded, withdrawnOrderIds: withdrawn.map((offer) => offer.orderId) }
  })
  if (!disabled) return { kind: 'no_courier' }
  countWithdrawn(disabled.withdrawnOrderIds.length)
  const active = await findActiveOrderIdsOfCourier(sql, courierId)
  const handedBack: OrderChangeOutcome[] = []
  for (const order of active.filter((order) => order.status === 'assigned')) handedBack.push(await handBackFromDisabled(sql, actor, order.id, courierId))
  // Read again: an order the courier picked up meanwhile (their token was still cached) refused its
  // hand-back and is theirs, for the operator to see listed.
  const keptOrderIds = active.some((order) => order.status === 'assigned')
    ? (await findActiveOrderIdsOfCourier(sql, courierId)).map((order) => order.id)
    : active.map((order) => order.id)
  return { kind: 'disabled', courier: disabled.courier, tokenHashes: disabled.tokenHashes, sessionsEnded: disabled.sessionsEnded, handedBack, withdrawnOrderIds: disabled.withdrawnOrderIds, keptOrderIds }
}

/**
 * An `assigned` order of a disabled courier back to `created` (reason `courier disabled`), through
 * the state machine: the disable's own step, and the dispatcher's sweep for one a disable left
 * (a crash between its commit and its hand-backs, an assignment that raced it).
 */
export function handBackFromDisabled(sql: Sql, actor: string, orderId: string, courierId: string): Promise<OrderChangeOutcome> {
  return changeOrder(sql, { orderId, scope: { courierId } }, { kind: 'advance', to: 'created', courier: null, reason: DISABLED_REASON }, { actor })
}

/** What disabling did, as `courier:disable` prints it and the console shows it. */
export interface CourierDisabled {
  courierId: string
  disabledAt: Date | null
  tokensRevoked: number
  /** Courier web app sessions ended. */
  sessionsEnded: number
  /** Orders back at `created`, for dispatch to offer again. */
  handedBack: string[]
  /** Orders already picked up: still the courier's, for the operator to see finished. */
  stillWithCourier: string[]
}

/** What follows a courier's disabling: the gateways told, and dispatch given the orders the courier left. */
export interface AfterDisabling {
  announce(message: Invalidation): Promise<void>
  redispatch(left: Extract<CourierDisabling, { kind: 'disabled' }>): Promise<void>
}

/**
 * `disableCourier`, then the gateways told to drop the courier's tokens from their caches and the
 * orders the courier left offered to the next one: the one step the CLI and the console both
 * take. Null: no such courier.
 */
export async function disableCourierAndAnnounce(sql: Sql, actor: string, courierId: string, after: AfterDisabling): Promise<CourierDisabled | null> {
  const disabled = await disableCourier(sql, actor, courierId)
  if (disabled.kind === 'no_courier') return null
  await after.announce({ kind: 'courier-token', tokenHashes: disabled.tokenHashes })
  await after.redispatch(disabled)
  return {
    courierId: disabled.courier.id,
    disabledAt: disabled.courier.disabledAt,
    tokensRevoked: disabled.tokenHashes.length,
    sessionsEnded: disabled.sessionsEnded,
    handedBack: disabled.handedBack.flatMap((outcome) => (outcome.kind === 'changed' ? [String(outcome.order.order_id)] : [])),
    stillWithCourier: disabled.keptOrderIds,
  }
}
