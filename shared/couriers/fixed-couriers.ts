import { findCourier, insertCourier } from '../db/couriers.js'
import { PG, type Sql } from '../db/sql.js'
import { DEFAULT_MAX_WEIGHT_KG, type CourierVehicleType } from '../courier.js'
import { issueCourierToken } from './accounts.js'

// Couriers known by a fixed id: the demo rider `npm start` prints a token for, and the
// simulator's riders. Every run (and two runs racing on a fresh database) finds the same ones,
// and each run gets fresh tokens.

export interface FixedCourier {
  courier_id: string
  courier_token: string
  /** What the rider logs in to the courier web app with, beside a one-time code. */
  phone: string
}

interface Spec {
  id: string
  name: string
  phone: string
  vehicleType: CourierVehicleType
  vehiclePlate: string | null
}

/**
 * Creates the courier if missing and issues it a token; null if an operator disabled it (it stays
 * disabled) or gave its phone to an enabled courier of their own (phones are one courier's).
 */
async function fixedCourier(sql: Sql, spec: Spec): Promise<FixedCourier | null> {
  const existing = await findCourier(sql, spec.id)
  if (existing?.disabledAt) return null
  if (!existing) {
    // A unique violation: another run made it (its id), or the phone is taken (then it stays missing).
    await insertCourier(sql, { ...spec, maxWeightKg: DEFAULT_MAX_WEIGHT_KG[spec.vehicleType] })
      .catch((err: { code?: string }) => { if (err.code !== PG.uniqueViolation) throw err })
    if (!(await findCourier(sql, spec.id))) return null
  }
  const { token } = await issueCourierToken(sql, spec.id)
  return { courier_id: spec.id, courier_token: token, phone: existing?.phone ?? spec.phone }
}

export function demoCourier(sql: Sql): Promise<FixedCourier | null> {
  return fixedCourier(sql, { id: '00000000-0000-4000-8000-00000000d0c0', name: 'Demo Rider', phone: '+2348000000001', vehicleType: 'bike', vehiclePlate: 'DEMO-001' })
}

/** The simulator's rider number `index` (from 1), on the vehicle it is given. */
export function simulatedCourier(sql: Sql, index: number, vehicleType: CourierVehicleType): Promise<FixedCourier | null> {
  const n = String(index).padStart(3, '0')
  return fixedCourier(sql, {
    id: `00000000-0000-4000-8000-a1${String(index).padStart(10, '0')}`,
    name: `Sim Rider ${n}`, phone: `+2348000001${n}`, vehicleType, vehiclePlate: `SIM-${n}`,
  })
}
