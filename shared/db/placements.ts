import { placementOutcomeSchema, type PlacementOutcome } from '../placement/outcome.js'
import type { PlatformRates } from '../courier.js'
import type { Shipment } from '../schemas/shipment.js'
import type { Business } from './businesses.js'
import { DEFAULT_PLATFORM_RATES, RATES_COLUMNS, ratesFromRow, type RatesColumns } from './platform-rates.js'
import { pastCursor, type Db, type Tx } from './sql.js'

export type PlacementStatus = 'pending' | 'succeeded' | 'failed'

export interface Placement {
  id: string
  businessId: string
  livemode: boolean
  status: PlacementStatus
  idempotencyKey: string | null
  requestHash: string
  /** Null while pending. */
  outcome: PlacementOutcome | null
  createdAt: Date
}

const COLUMNS = 'id, business_id, livemode, status, idempotency_key, request_hash, outcome, created_at'

// outcome is jsonb written by the worker; it is parsed so a Placement's outcome is typed.
type PlacementRow = Omit<Placement, 'outcome'> & { outcome: unknown }

function toPlacement(row: PlacementRow): Placement {
  return { ...row, outcome: row.outcome === null ? null : placementOutcomeSchema.parse(row.outcome) }
}

/**
 * Records a placement, with its shipments (JSON text: the gateway serialises them once, for
 * `requestHash` and for the row), before its job is queued. With an Idempotency-Key,
 * a key already held by this business wins and false comes back: the caller then reads that
 * placement instead.
 */
export async function createPendingPlacement(db: Db, input: { id: string; businessId: string; livemode: boolean; idempotencyKey: string | null; requestHash: string; shipmentsJson: string }): Promise<boolean> {
  const rows = await db`
    insert into placements (id, business_id, livemode, status, idempotency_key, request_hash, shipments)
    values (${input.id}, ${input.businessId}, ${input.livemode}, 'pending', ${input.idempotencyKey}, ${input.requestHash}, ${input.shipmentsJson}::text::jsonb)
    on conflict (business_id, livemode, idempotency_key) where idempotency_key is not null do nothing
    returning id`
  return rows.length === 1
}

export async function findPlacementByKey(db: Db, scope: { businessId: string; livemode: boolean }, idempotencyKey: string): Promise<Placement | null> {
  const [row] = await db<PlacementRow[]>`
    select ${db.unsafe(COLUMNS)}
    from placements where business_id = ${scope.businessId} and livemode = ${scope.livemode} and idempotency_key = ${idempotencyKey}`
  return row ? toPlacement(row) : null
}

/** A placement of this business in this mode; another business's, or the other mode's, reads as unknown. */
export async function findPlacement(db: Db, scope: { businessId: string; livemode: boolean }, id: string): Promise<Placement | null> {
  const [row] = await db<PlacementRow[]>`
    select ${db.unsafe(COLUMNS)}
    from placements where id = ${id} and business_id = ${scope.businessId} and livemode = ${scope.livemode}`
  return row ? toPlacement(row) : null
}

/** The placements among `ids`, for the gateway's wait. */
export async function findPlacementsByIds(db: Db, ids: string[]): Promise<Placement[]> {
  const rows = await db<PlacementRow[]>`
    select ${db.unsafe(COLUMNS)} from placements where id = any(${ids}::uuid[])`
  return rows.map(toPlacement)
}

/** A pending placement as its job finds it, before its transaction: what it ships, for whom, and the road factor to measure it by. */
export interface PlacementWork {
  status: PlacementStatus
  /** False for a test key's placement: its orders, events and money are the sandbox's. */
  livemode: boolean
  shipments: Shipment[]
  business: Business
  roadFactor: number
}

/**
 * The placement with its business and the road factor in force, in one statement, read without
 * a lock: the worker locates the shipments before its transaction. Null when the placement is
 * unknown or not this business's.
 */
export async function findPlacementWork(db: Db, id: string, businessId: string): Promise<PlacementWork | null> {
  const [row] = await db<(Business & Omit<PlacementWork, 'business' | 'roadFactor'> & { roadFactor: string | null })[]>`
    select b.*, p.status, p.livemode, p.shipments, r.road_factor
    from placements p join businesses b on b.id = p.business_id
    left join platform_rates r on r.id
    where p.id = ${id} and p.business_id = ${businessId}`
  if (!row) return null
  const { status, livemode, shipments, roadFactor, ...business } = row
  return { status, livemode, shipments, business, roadFactor: roadFactor === null ? DEFAULT_PLATFORM_RATES.roadFactor : Number(roadFactor) }
}

/** What the placement's transaction reads first. */
export interface OpenedPlacement {
  status: PlacementStatus
  /** The newest version of the business's enabled card, or null when none is enabled. */
  card: { rateCardId: string; versionId: string } | null
  rates: PlatformRates
  /** Null when the business has no wallet of the placement's mode. */
  walletBalance: number | null
  /** The database's clock once the placement's lock is held, to the millisecond. */
  now: Date
}

type OpenedRow = Pick<OpenedPlacement, 'status' | 'walletBalance' | 'now'> & { rateCardId: string | null; versionId: string | null } & RatesColumns

/**
 * Locks the placement for the one transaction that may settle it and reads, in the same
 * statement, what settling it needs: the card version in force, the platform rates, the wallet's
 * balance (unlocked: the debit re-checks it under the wallet's lock) and the clock. The lock is
 * taken in a materialized CTE, so the clock is read after it is held. Null when the placement
 * is unknown.
 */
export async function openPlacement(tx: Tx, id: string, scope: { businessId: string; livemode: boolean }): Promise<OpenedPlacement | null> {
  const [row] = await tx<OpenedRow[]>`
    with placement as materialized (select status from placements where id = ${id} for update)
    select p.status, w.balance as wallet_balance, card.rate_card_id, card.version_id, r.*,
      date_trunc('milliseconds', clock_timestamp()) as now
    from placement p
    left join wallets w on w.business_id = ${scope.businessId} and w.livemode = ${scope.livemode}
    left join lateral (select ${tx.unsafe(RATES_COLUMNS)} from platform_rates where id) r on true
    left join lateral (
      select b.rate_card_id, v.id as version_id from businesses b
      join lateral (select id from rate_card_versions where rate_card_id = b.rate_card_id order by version desc limit 1) v on true
      where b.id = ${scope.businessId}) card on true`
  if (!row) return null
  const { status, walletBalance, now, rateCardId, versionId, ...rates } = row
  return {
    status,
    card: rateCardId === null || versionId === null ? null : { rateCardId, versionId },
    rates: ratesFromRow(rates),
    walletBalance,
    now,
  }
}

// JSON goes in as text: a parameter Postgres types as jsonb would be JSON-encoded a second time.
export async function settlePlacement(tx: Tx, id: string, status: 'succeeded' | 'failed', outcome: PlacementOutcome): Promise<void> {
  await tx`
    update placements set status = ${status}, outcome = ${JSON.stringify(outcome)}::text::jsonb, completed_at = now()
    where id = ${id}`
}

/**
 * Settles a still-pending placement as not processed and frees its Idempotency-Key; true when
 * this call settled it. The update takes the row lock and re-checks `pending` once it holds it,
 * so it cannot overwrite the worker's outcome, and a job that runs later finds the row settled.
 */
export async function settleNotProcessed(db: Db, id: string, outcome: PlacementOutcome): Promise<boolean> {
  const rows = await db`
    update placements
    set status = 'failed', outcome = ${JSON.stringify(outcome)}::text::jsonb, idempotency_key = null, completed_at = now()
    where id = ${id} and status = 'pending'
    returning id`
  return rows.length === 1
}

/** Where a page of stale pending placements ended: the last one, its time as Postgres's text (`pastCursor`). */
export interface PendingCursor {
  id: string
  createdAt: string
}

/**
 * Pending placements older than `seconds`, oldest first from `after`, `limit` at a time: the
 * settler asks the queue whether a job backs each, and pages on past those still waiting.
 */
export async function findStalePending(db: Db, seconds: number, limit: number, after: PendingCursor | null): Promise<PendingCursor[]> {
  return db<PendingCursor[]>`
    select id, created_at::text as created_at from placements
    where status = 'pending' and created_at < now() - make_interval(secs => ${seconds})
      ${after ? db`and ${pastCursor(db, 'created_at', 'id', { at: after.createdAt, id: after.id })}` : db``}
    order by created_at, id limit ${limit}`
}

/** Idempotency-Keys live `ttlHours`; after that the key may be used for a new request. */
export async function releaseExpiredKeys(db: Db, ttlHours: number, limit: number): Promise<number> {
  const result = await db`
    update placements set idempotency_key = null where id = any(array(
      select id from placements
      where idempotency_key is not null and status <> 'pending' and created_at < now() - make_interval(hours => ${ttlHours})
      limit ${limit} for update skip locked))`
  return result.count
}

/** Frees one expired key so the request that brought it again starts afresh. */
export async function releaseKey(db: Db, id: string): Promise<void> {
  await db`update placements set idempotency_key = null where id = ${id}`
}
