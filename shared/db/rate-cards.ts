import { isUuid } from '../ids.js'
import { toMinor } from '../money.js'
import { priceKey, type RateCard, type RateOption, type VehicleType, type Zone } from '../courier.js'
import type { RateCardFile } from '../schemas/rate-card.js'
import type { Db, Tx } from './sql.js'

export interface ImportedRateCard {
  rate_card_id: string
  name: string
  version: number
  options: { id: string; vehicle_type: VehicleType; label: string }[]
}

/** The ids a new version is stored under, made by the caller: one per option, in file order. */
export interface RateCardVersionIds {
  /** Used only when no card of this name exists yet. */
  rateCardId: string
  versionId: string
  optionIds: string[]
}

/**
 * Writes a checked card: a known `name` becomes the card's next version, a new name a new card
 * at version 1; every version gets fresh option ids, so ids of older versions stop working.
 * Runs in the caller's transaction, or in one of its own when given the pool.
 */
export async function insertRateCardVersion(db: Db, card: RateCardFile, ids: RateCardVersionIds): Promise<ImportedRateCard> {
  return inTransaction(db, (tx) => writeVersion(tx, card, ids))
}

async function writeVersion(tx: Tx, card: RateCardFile, ids: RateCardVersionIds): Promise<ImportedRateCard> {
  // Two imports of one name would both read version N (or both create the card) without this.
  await tx`select pg_advisory_xact_lock(hashtext(${'rate-card:' + card.name}))`
  const [existing] = await tx<{ id: string }[]>`select id from rate_cards where name = ${card.name}`
  const rateCardId = existing?.id ?? ids.rateCardId
  if (!existing) await tx`insert into rate_cards (id, name, currency) values (${rateCardId}, ${card.name}, ${card.currency})`
  const [{ version }] = await tx<{ version: number }[]>`
    select coalesce(max(version), 0) + 1 as version from rate_card_versions where rate_card_id = ${rateCardId}`
  const versionId = ids.versionId
  await tx`insert into rate_card_versions (id, rate_card_id, version) values (${versionId}, ${rateCardId}, ${version})`

  for (const [position, zone] of card.zones.entries()) {
    await tx`insert into zones (version_id, position, name, polygon) values (${versionId}, ${position}, ${zone.name}, ${tx.json(zone.polygon)})`
  }
  const options = card.options.map((option, position) => ({
    id: ids.optionIds[position],
    version_id: versionId,
    position,
    vehicle_type: option.vehicle_type,
    label: option.label,
    min_weight_kg: option.min_weight_kg ?? null,
    max_weight_kg: option.max_weight_kg,
  }))
  await tx`insert into options ${tx(options)}`
  const prices = card.options.flatMap((option, index) =>
    option.prices.map((price) => ({ option_id: options[index].id, from_zone: price.from, to_zone: price.to, price: toMinor(price.price) })),
  )
  // Postgres takes at most 65535 parameters per statement; 4 per row.
  for (let start = 0; start < prices.length; start += 5000) await tx`insert into zone_prices ${tx(prices.slice(start, start + 5000))}`

  return { rate_card_id: rateCardId, name: card.name, version, options: options.map((option) => ({ id: option.id, vehicle_type: option.vehicle_type, label: option.label })) }
}

/** The newest version of a card, as the engine reads it, or null for an unknown id. */
export async function loadRateCard(db: Db, rateCardId: string): Promise<RateCard | null> {
  if (!isUuid(rateCardId)) return null
  const [head] = await db<CardHead[]>`
    select v.id as version_id, v.version, v.created_at, c.name, c.currency
    from rate_card_versions v join rate_cards c on c.id = v.rate_card_id
    where v.rate_card_id = ${rateCardId} order by v.version desc limit 1`
  return head ? loadVersion(db, rateCardId, head) : null
}

/** A card version's head row: which version, and the card's name and currency. */
interface CardHead { versionId: string; version: number; createdAt: Date; name: string; currency: string }

/** One version of a card, whole. */
export async function loadRateCardVersion(db: Db, rateCardId: string, versionId: string): Promise<RateCard | null> {
  const [head] = await db<CardHead[]>`
    select v.id as version_id, v.version, v.created_at, c.name, c.currency
    from rate_card_versions v join rate_cards c on c.id = v.rate_card_id
    where v.id = ${versionId} and v.rate_card_id = ${rateCardId}`
  return head ? loadVersion(db, rateCardId, head) : null
}

async function loadVersion(db: Db, rateCardId: string, head: CardHead): Promise<RateCard> {
  const [zones, optionRows, priceRows] = await Promise.all([
    db<{ name: string; polygon: Zone['polygon'] }[]>`select name, polygon from zones where version_id = ${head.versionId} order by position`,
    db<{ id: string; vehicleType: VehicleType; label: string; minWeightKg: string | null; maxWeightKg: string }[]>`
      select id, vehicle_type, label, min_weight_kg, max_weight_kg from options where version_id = ${head.versionId} order by position`,
    db<{ optionId: string; fromZone: string; toZone: string; price: number }[]>`
      select p.option_id, p.from_zone, p.to_zone, p.price from zone_prices p join options o on o.id = p.option_id
      where o.version_id = ${head.versionId}`,
  ])
  const options: RateOption[] = optionRows.map((row) => ({
    ...row,
    // numeric columns come back as strings
    minWeightKg: row.minWeightKg === null ? null : Number(row.minWeightKg),
    maxWeightKg: Number(row.maxWeightKg),
    prices: new Map(),
  }))
  const byId = new Map(options.map((option) => [option.id, option]))
  for (const row of priceRows) byId.get(row.optionId)!.prices.set(priceKey(row.fromZone, row.toZone), row.price)
  return {
    rateCardId,
    name: head.name,
    version: head.version,
    versionId: head.versionId,
    currency: head.currency,
    updatedAt: head.createdAt,
    zones: zones.map((zone) => ({ name: zone.name, polygon: zone.polygon })),
    options,
  }
}

/** The card in force for a business (newest version of its enabled card), or null when none is enabled. */
export async function loadRateCardForBusiness(db: Db, businessId: string): Promise<RateCard | null> {
  if (!isUuid(businessId)) return null
  const [business] = await db<{ rateCardId: string | null }[]>`select rate_card_id from businesses where id = ${businessId}`
  return business?.rateCardId ? loadRateCard(db, business.rateCardId) : null
}

/** The card's name, or null when there is no such card. */
export async function findRateCardName(db: Db, rateCardId: string): Promise<string | null> {
  if (!isUuid(rateCardId)) return null
  const [row] = await db<{ name: string }[]>`select name from rate_cards where id = ${rateCardId}`
  return row?.name ?? null
}

export interface RateCardSummary {
  id: string
  name: string
  currency: string
  versions: { version: number; createdAt: string }[]
  businesses: number
}

/** Every card with its versions (newest first) and how many businesses price with it. */
export async function listRateCards(db: Db): Promise<RateCardSummary[]> {
  return db<RateCardSummary[]>`
    select c.id, c.name, c.currency,
      (select coalesce(json_agg(json_build_object('version', v.version, 'createdAt', v.created_at) order by v.version desc), '[]')
         from rate_card_versions v where v.rate_card_id = c.id) as versions,
      (select count(*)::int from businesses b where b.rate_card_id = c.id) as businesses
    from rate_cards c order by c.name`
}

function inTransaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  // Only a transaction has `savepoint`; the pool has `begin`.
  if ('savepoint' in db) return work(db)
  return db.begin((tx) => work(tx)) as Promise<T>
}
