import type { Db, Tx } from './sql.js'

export type PlacementStatus = 'pending' | 'succeeded' | 'failed'

/** What a finished placement answers, stored so every replay and read answers the same. */
export interface PlacementOutcome {
  statusCode: number
  body: Record<string, unknown>
}

export interface Placement {
  id: string
  businessId: string
  status: PlacementStatus
  idempotencyKey: string | null
  requestHash: string
  outcome: PlacementOutcome | null
  createdAt: Date
}

interface PlacementRow {
  id: string
  business_id: string
  status: PlacementStatus
  idempotency_key: string | null
  request_hash: string
  status_code: number | null
  response: Record<string, unknown> | null
  created_at: Date
}

function toPlacement(row: PlacementRow): Placement {
  return {
    id: row.id,
    businessId: row.business_id,
    status: row.status,
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    outcome: row.status_code === null || row.response === null ? null : { statusCode: row.status_code, body: row.response },
    createdAt: row.created_at,
  }
}

/**
 * Records a placement before its job is queued. With an Idempotency-Key, a key already held by
 * this business wins and null comes back: the caller then reads that placement instead.
 */
export async function createPendingPlacement(db: Db, input: { id: string; businessId: string; idempotencyKey: string | null; requestHash: string }): Promise<boolean> {
  const rows = await db`
    insert into placements (id, business_id, status, idempotency_key, request_hash)
    values (${input.id}, ${input.businessId}, 'pending', ${input.idempotencyKey}, ${input.requestHash})
    on conflict (business_id, idempotency_key) where idempotency_key is not null do nothing
    returning id`
  return rows.length === 1
}

export async function findPlacementByKey(db: Db, businessId: string, idempotencyKey: string): Promise<Placement | null> {
  const [row] = await db<PlacementRow[]>`
    select * from placements where business_id = ${businessId} and idempotency_key = ${idempotencyKey}`
  return row ? toPlacement(row) : null
}

/** A placement of this business; another business's id reads as unknown. */
export async function findPlacement(db: Db, businessId: string, id: string): Promise<Placement | null> {
  const [row] = await db<PlacementRow[]>`select * from placements where id = ${id} and business_id = ${businessId}`
  return row ? toPlacement(row) : null
}

/** The placements among `ids` that still exist, for the gateway's fallback when a queue event was missed. */
export async function findPlacementsByIds(db: Db, ids: string[]): Promise<Placement[]> {
  const rows = await db<PlacementRow[]>`select * from placements where id = any(${ids}::uuid[])`
  return rows.map(toPlacement)
}

/** Locks the placement for the one transaction that may settle it; null when it is gone. */
export async function lockPlacement(tx: Tx, id: string): Promise<Placement | null> {
  const [row] = await tx<PlacementRow[]>`select * from placements where id = ${id} for update`
  return row ? toPlacement(row) : null
}

export async function settlePlacement(tx: Tx, id: string, status: 'succeeded' | 'failed', outcome: PlacementOutcome): Promise<void> {
  await tx`
    update placements
    set status = ${status}, status_code = ${outcome.statusCode}, response = ${tx.json(outcome.body as never)}, completed_at = now()
    where id = ${id}`
}

/**
 * Forgets a placement that never ran (its job could not be queued, or failed for good on a
 * fault), so its Idempotency-Key is free for a retry. Settled placements are never removed.
 */
export async function discardPendingPlacement(db: Db, id: string): Promise<void> {
  await db`delete from placements where id = ${id} and status = 'pending'`
}

/** Idempotency-Keys live 24 hours; after that the key may be used for a new request. */
export async function releaseExpiredKeys(db: Db, ttlHours: number): Promise<number> {
  const rows = await db`
    update placements set idempotency_key = null
    where idempotency_key is not null and status <> 'pending' and created_at < now() - make_interval(hours => ${ttlHours})
    returning id`
  return rows.length
}

/** Frees one expired key so the request that brought it again starts afresh. */
export async function releaseKey(db: Db, id: string): Promise<void> {
  await db`update placements set idempotency_key = null where id = ${id}`
}

/** Pending placements older than `minutes`: candidates for the sweep when no job backs them. */
export async function findStalePending(db: Db, minutes: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select id from placements where status = 'pending' and created_at < now() - make_interval(mins => ${minutes}) limit 500`
  return rows.map((row) => row.id)
}
