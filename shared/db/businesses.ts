import type { Db, Tx } from './sql.js'

/** A business account as the gateway, the pricing engine and the operator see it. */
export interface Business {
  id: string
  name: string
  phone: string
  address: string
  state: string
  latitude: number | null
  longitude: number | null
  currency: string
  rateCardId: string | null
  isDemo: boolean
}

/** What the operator gives; the caller makes the id (`newUuid`), and no rate card is enabled yet. */
export type NewBusiness = Pick<Business, 'name' | 'phone' | 'address' | 'state' | 'currency'> & Partial<Pick<Business, 'latitude' | 'longitude' | 'isDemo'>>

/** Inserts the business only; its wallet is created by `createWallet` in the same transaction. */
export async function createBusiness(db: Db, id: string, input: NewBusiness): Promise<Business> {
  const [row] = await db<Business[]>`
    insert into businesses (id, name, phone, address, state, latitude, longitude, currency, is_demo)
    values (${id}, ${input.name}, ${input.phone}, ${input.address}, ${input.state},
            ${input.latitude ?? null}, ${input.longitude ?? null}, ${input.currency}, ${input.isDemo ?? false})
    returning *`
  return row
}

/**
 * Holds, until the transaction ends, the right to open a business of this name (any case), so two
 * creations of one business at once open it once. Names are not unique in the table: a lock, not
 * an index, settles it.
 */
export async function lockBusinessName(tx: Tx, name: string): Promise<void> {
  await tx`select pg_advisory_xact_lock(hashtext('business-name:' || lower(${name})))`
}

/** The businesses of this name, any case, oldest first. */
export async function findBusinessesNamed(db: Db, name: string): Promise<Business[]> {
  return db<Business[]>`select * from businesses where lower(name) = lower(${name}) order by created_at, id`
}

export async function findBusiness(db: Db, id: string): Promise<Business | null> {
  const [row] = await db<Business[]>`select * from businesses where id = ${id}`
  return row ?? null
}

/** The one demo business (a partial unique index allows only one), if `demo:seed` ran before. */
export async function findDemoBusiness(db: Db): Promise<Business | null> {
  const [row] = await db<Business[]>`select * from businesses where is_demo`
  return row ?? null
}

/**
 * Enables a rate card for a business (replacing any earlier one) or, with `null`, disables
 * rate-card pricing. Returns false when the business does not exist.
 */
export async function setBusinessRateCard(db: Db, businessId: string, rateCardId: string | null): Promise<boolean> {
  const rows = await db`update businesses set rate_card_id = ${rateCardId} where id = ${businessId} returning id`
  return rows.length === 1
}

/** Businesses whose name contains `search` (any case), or whose id it is; newest first. */
export async function searchBusinesses(db: Db, search: string, limit: number): Promise<(Business & { createdAt: Date })[]> {
  const pattern = `%${search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`
  return db<(Business & { createdAt: Date })[]>`
    select * from businesses
    where ${search === '' ? db`true` : db`name ilike ${pattern} or id::text = ${search.toLowerCase()}`}
    order by created_at desc, id limit ${limit}`
}
