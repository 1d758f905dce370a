import { createCourier, type NewCourier } from '../../shared/couriers/accounts.js'
import type { CourierRow } from '../../shared/db/couriers.js'
import type { Sql } from '../../shared/db/sql.js'

// Couriers for tests that need one and do not test creating it: each with a phone of its own, as
// the database requires of enabled couriers (migration 00023).

let phones = 0

/** A Nigerian mobile number no other courier of this test process was given. */
export function freshPhone(): string {
  phones += 1
  return `+234817${String(phones).padStart(7, '0')}`
}

/** `createCourier` (a fresh phone unless one is given), which must succeed. */
export async function createdCourier(sql: Sql, input: Partial<NewCourier> & Pick<NewCourier, 'name'>): Promise<{ courier: CourierRow; token: string }> {
  const created = await createCourier(sql, 'test', { phone: freshPhone(), vehicleType: 'bike', vehiclePlate: null, maxWeightKg: null, ...input })
  if (created.kind !== 'created') throw new Error(`courier ${input.name}: ${created.message}`)
  return created
}
