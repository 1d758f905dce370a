import type { Db, Tx } from './sql.js'

export type OfferStatus = 'pending' | 'accepted' | 'declined' | 'expired' | 'withdrawn'

export interface Offer {
  id: string
  orderId: string
  courierId: string
  status: OfferStatus
  createdAt: Date
  expiresAt: Date
  decidedAt: Date | null
  reason: string | null
  /** The W3C traceparent of the dispatch step that made it, if it was traced. */
  traceparent: string | null
  /** When the dispatch round it was made in began; null for offers made before rounds were kept, or by hand. */
  roundStartedAt: Date | null
}

const COLUMNS = 'id, order_id, courier_id, status, created_at, expires_at, decided_at, reason, traceparent, round_started_at'

/**
 * A pending offer, unless the order or the courier already has one (the partial unique indexes
 * decide, whatever runs at once) or the courier is disabled. The courier's row is read `for share`,
 * which `courier:disable`'s update of it waits on: a disable that committed first leaves no offer
 * made, and one that comes after withdraws the offer made. Null: no offer.
 */
export async function insertOffer(db: Db, offer: { id: string; orderId: string; courierId: string; offerS: number; traceparent?: string | null; roundStartedAt?: Date | null }): Promise<Offer | null> {
  const [row] = await db<Offer[]>`
    insert into dispatch_offers (id, order_id, courier_id, expires_at, traceparent, round_started_at)
    select ${offer.id}::text, ${offer.orderId}::text, c.id, now() + make_interval(secs => ${offer.offerS}), ${offer.traceparent ?? null}::text, ${offer.roundStartedAt ?? null}::timestamptz
    from couriers c where c.id = ${offer.courierId} and c.disabled_at is null
    for share
    on conflict do nothing
    returning ${db.unsafe(COLUMNS)}`
  return row ?? null
}

/** Takes back an offer inserted in the same transaction, before anyone saw it (the courier filled up meanwhile). */
export async function dropOffer(tx: Tx, id: string): Promise<void> {
  await tx`delete from dispatch_offers where id = ${id} and status = 'pending'`
}

/** Locks the offer for its decision; null when it is not the courier's (or does not exist). */
export async function lockOffer(tx: Tx, id: string, courierId: string): Promise<Offer | null> {
  const [row] = await tx<Offer[]>`select ${tx.unsafe(COLUMNS)} from dispatch_offers where id = ${id} and courier_id = ${courierId} for update`
  return row ?? null
}

/** Locks the courier's pending offers until the transaction ends (an operator giving them another order withdraws them). */
export async function lockPendingOffersOfCourier(tx: Tx, courierId: string): Promise<void> {
  await tx`select 1 from dispatch_offers where courier_id = ${courierId} and status = 'pending' for update`
}

export async function findOffer(db: Db, id: string): Promise<Offer | null> {
  const [row] = await db<Offer[]>`select ${db.unsafe(COLUMNS)} from dispatch_offers where id = ${id}`
  return row ?? null
}

/** Closes a pending offer; null when it was no longer pending (someone else decided first). */
export async function closeOffer(db: Db, id: string, status: Exclude<OfferStatus, 'pending'>, reason: string | null): Promise<Offer | null> {
  const [row] = await db<Offer[]>`
    update dispatch_offers set status = ${status}, decided_at = now(), reason = ${reason}
    where id = ${id} and status = 'pending'
    returning ${db.unsafe(COLUMNS)}`
  return row ?? null
}

/**
 * Closes a pending offer `expired` once the database's clock says its time is up (its job ran on
 * another machine's clock); null when it was decided first or is not due yet (then the sweep's
 * `expireDueOffers` closes it when it is).
 */
export async function expireOfferIfDue(db: Db, id: string): Promise<Offer | null> {
  const [row] = await db<Offer[]>`
    update dispatch_offers set status = 'expired', decided_at = now()
    where id = ${id} and status = 'pending' and expires_at <= now()
    returning ${db.unsafe(COLUMNS)}`
  return row ?? null
}

/** Withdraws the order's pending offer (a cancel, an operator's assignment); the one withdrawn, if any. */
export async function withdrawOffersOfOrder(db: Db, orderId: string, reason: string): Promise<Offer[]> {
  return db<Offer[]>`
    update dispatch_offers set status = 'withdrawn', decided_at = now(), reason = ${reason}
    where order_id = ${orderId} and status = 'pending'
    returning ${db.unsafe(COLUMNS)}`
}

/** Withdraws the pending offer a courier holds (a disabled courier takes nothing more). */
export async function withdrawOffersOfCourier(db: Db, courierId: string, reason: string): Promise<Offer[]> {
  return db<Offer[]>`
    update dispatch_offers set status = 'withdrawn', decided_at = now(), reason = ${reason}
    where courier_id = ${courierId} and status = 'pending'
    returning ${db.unsafe(COLUMNS)}`
}

/** Expires every pending offer past its time, returning them (the dispatcher's sweep). */
export async function expireDueOffers(db: Db, limit: number): Promise<Offer[]> {
  return db<Offer[]>`
    update dispatch_offers set status = 'expired', decided_at = now()
    where id in (select id from dispatch_offers where status = 'pending' and expires_at <= now() order by expires_at limit ${limit} for update skip locked)
    returning ${db.unsafe(COLUMNS)}`
}

/** The courier's pending offers that have not run out. */
export async function findPendingOffersOfCourier(db: Db, courierId: string): Promise<Offer[]> {
  return db<Offer[]>`
    select ${db.unsafe(COLUMNS)} from dispatch_offers where courier_id = ${courierId} and status = 'pending' and expires_at > now()`
}

/** The couriers this order has been offered to since it last became `created`, and how many offers that makes. */
/** The courier of the order's latest accepted offer: for a `created` order, the one who handed it back. */
export async function lastAcceptedBy(db: Db, orderId: string): Promise<string | null> {
  const [row] = await db<{ courierId: string }[]>`
    select courier_id from dispatch_offers where order_id = ${orderId} and status = 'accepted' order by created_at desc limit 1`
  return row?.courierId ?? null
}

/** An order's offers made since `since` (when it last became `created`), oldest first: whom each asked, whether it is still pending, and in which round. */
export async function offersOfOrderSince(db: Db, orderId: string, since: Date): Promise<Pick<Offer, 'courierId' | 'status' | 'createdAt' | 'roundStartedAt'>[]> {
  return db<Pick<Offer, 'courierId' | 'status' | 'createdAt' | 'roundStartedAt'>[]>`
    select courier_id, status, created_at, round_started_at from dispatch_offers where order_id = ${orderId} and created_at >= ${since} order by created_at`
}

/** Whether the order has a pending offer. Asked under the order's lock, which every offer's insert takes, it stays true or false until the lock goes. */
export async function hasPendingOffer(tx: Tx, orderId: string): Promise<boolean> {
  const [row] = await tx<{ pending: boolean }[]>`select exists (select 1 from dispatch_offers where order_id = ${orderId} and status = 'pending') as pending`
  return row?.pending ?? false
}
