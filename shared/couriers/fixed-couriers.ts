import { findCourier, insertCourier } from '../db/couriers.js'
import { PG, type Sql } from '../db/sql.js'
import { DEFAULT_MAX_WEIGHT_KG } from '../courier.js'
import { issueCourierToken } from './accounts.js'

// The demo rider `npm start` prints a token for: one courier, known by a fixed id so that every
// run (and two runs racing on a fresh database) finds the same one; a fresh token each run.
const DEMO_COURIER = { id: '00000000-0000-4000-8000-00000000d0c0', name: 'Demo Rider', phone: '+2348000000001', vehicleType: 'bike', vehiclePlate: 'DEMO-001' } as const

export interface DemoCourier {
  courier_id: string
  courier_token: string
}

/** Creates the demo courier if missing and issues it a token; null if an operator disabled it (it stays disabled). */
export async function demoCourier(sql: Sql): Promise<DemoCourier | null> {
  const existing = await findCourier(sql, DEMO_COURIER.id)
  if (existing?.disabledAt) return null
  if (!existing) {
    await insertCourier(sql, { ...DEMO_COURIER, maxWeightKg: DEFAULT_MAX_WEIGHT_KG[DEMO_COURIER.vehicleType] })
      .catch((err: { code?: string }) => { if (err.code !== PG.uniqueViolation) throw err })
  }
  const { token } = await issueCourierToken(sql, DEMO_COURIER.id)
  return { courier_id: DEMO_COURIER.id, courier_token: token }
}
