import { createHmac } from 'node:crypto'
import { drainInBatches } from '../drain.js'
import { insertAudit } from '../db/audit.js'
import { claimPlacementsOlderThan, eraseOrders, erasePlacementShipments, erasePlacementShipmentsByPhone, findOrdersByPhone } from '../db/personal-data.js'
import type { Sql } from '../db/sql.js'
import type { PhotoStore } from '../storage/photos.js'

/** The shipment fields that name, reach or locate a person, or say what they sent. */
export const PERSONAL_FIELDS = [
  'recipient_name', 'recipient_phone', 'recipient_email', 'alternate_phone',
  'sender_name', 'sender_phone', 'pickup_address', 'dropoff_address',
  'pickup_latitude', 'pickup_longitude', 'dropoff_latitude', 'dropoff_longitude',
  'item_description',
]

const ERASE_BATCH = 500
// Orders still on their way: erasing them would leave a courier without an address.
const ACTIVE = ['created', 'assigned', 'picked_up']

/**
 * Removes delivery photos from the store inside the erasure's transaction, before it commits: a
 * photo the store could not remove rolls the erasure back, to be tried again, and never leaves a
 * photo behind with nothing pointing at it.
 */
async function removePhotos(photos: PhotoStore, keys: string[]): Promise<void> {
  await Promise.all(keys.map((key) => photos.remove(key)))
}

/** Erases the personal data of placements settled more than `days` ago, in batches; the count erased. */
export async function erasePersonalDataOlderThan(sql: Sql, photos: PhotoStore, days: number): Promise<number> {
  return drainInBatches(ERASE_BATCH, (limit) => sql.begin(async (tx) => {
    const ids = await claimPlacementsOlderThan(tx, days, limit)
    if (ids.length === 0) return 0
    await erasePlacementShipments(tx, ids, PERSONAL_FIELDS)
    await removePhotos(photos, await eraseOrders(tx, { placementIds: ids }, PERSONAL_FIELDS))
    return ids.length
  }))
}

/** The national number of a phone as sent (`+234 809 000 0000`, `08090000000`): its last ten digits. */
export function phoneDigits(phone: string): string | null {
  const digits = phone.replace(/\D/g, '')
  return digits.length >= 10 && digits.length <= 15 ? digits.slice(-10) : null
}

/**
 * What names the person in the audit trail without their number: an HMAC under a key kept outside
 * the database (ERASURE_AUDIT_KEY), so whoever reads the trail cannot try every number back to
 * the person, while an operator given the number (and the key) can still find their erasure.
 */
export function phoneFingerprint(digits: string, key: string): string {
  return createHmac('sha256', key).update(`phone:${digits}`).digest('hex').slice(0, 16)
}

export type PersonErasure =
  | { kind: 'erased'; orderIds: string[] }
  | { kind: 'active'; orderIds: string[] }

/**
 * Erases one person's data on request, whatever its age: every order whose recipient, alternate
 * or sender phone is `digits`, their placements' copies and their events. Refused, erasing
 * nothing, while any of those orders is still on its way.
 */
export async function erasePerson(sql: Sql, photos: PhotoStore, actor: string, digits: string, auditKey: string): Promise<PersonErasure> {
  return sql.begin(async (tx) => {
    const orders = await findOrdersByPhone(tx, digits)
    const active = orders.filter((order) => ACTIVE.includes(order.status))
    if (active.length > 0) return { kind: 'active', orderIds: active.map((order) => order.id) }
    const orderIds = orders.map((order) => order.id)
    if (orderIds.length > 0) {
      await erasePlacementShipmentsByPhone(tx, orderIds, digits, PERSONAL_FIELDS)
      await removePhotos(photos, await eraseOrders(tx, { orderIds }, PERSONAL_FIELDS))
    }
    // The trail names the request by a keyed hash of the number, never the number itself.
    await insertAudit(tx, { actor, action: 'person.erase', businessId: null, subject: `phone ${phoneFingerprint(digits, auditKey)}`, before: null, after: { orders: orderIds } })
    return { kind: 'erased', orderIds }
  })
}
