import { insertAudit } from '../db/audit.js'
import { revokeApiKey, type RevokedApiKey } from '../db/api-keys.js'
import { createBusiness, findBusiness, findBusinessesNamed, lockBusinessName, setBusinessRateCard, type Business, type NewBusiness } from '../db/businesses.js'
import { findRateCardName, type ImportedRateCard } from '../db/rate-cards.js'
import type { Sql, Tx } from '../db/sql.js'
import { createWallet, creditWallet, type WalletCredit } from '../db/wallets.js'
import { newUuid } from '../ids.js'
import { toMajor } from '../money.js'
import { readRateCardFile, writeRateCard } from '../pricing/rate-card-file.js'

/*
 * What an operator does to accounts, the one copy the CLI and the console share. Each writes its
 * audit row (DESIGN 12: who, what, when, before and after) in the transaction of the change.
 * `actor` is the console user's e-mail or `cli:<os user>`. Callers announce the invalidation
 * after the commit, each over its own Redis connection.
 */

async function openBusinessIn(tx: Tx, actor: string, input: NewBusiness): Promise<Business> {
  const created = await createBusiness(tx, newUuid(), input)
  await createWallet(tx, created.id, created.currency)
  await insertAudit(tx, { actor, action: 'business.create', businessId: created.id, subject: created.name, before: null, after: { name: created.name, state: created.state } })
  return created
}

/** What a business is known by besides its name: a repeat that gives other values is not the same business. */
const BUSINESS_DETAILS = ['phone', 'address', 'state', 'latitude', 'longitude', 'currency'] as const satisfies readonly BusinessDetail[]
type BusinessDetail = Exclude<keyof NewBusiness, 'name' | 'isDemo'>
// A field added to NewBusiness does not compile until it is compared above (or left out of BusinessDetail).
const everyDetailCompared: [Exclude<BusinessDetail, (typeof BUSINESS_DETAILS)[number]>] extends [never] ? true : never = true
void everyDetailCompared

export type BusinessDifference = { field: (typeof BUSINESS_DETAILS)[number]; stored: string | number | null; given: string | number | null }

export type BusinessOpening =
  | { kind: 'opened'; business: Business }
  | { kind: 'exists'; business: Business }
  | { kind: 'conflict'; business: Business; differences: BusinessDifference[] }

/**
 * A business and its empty wallet, in the deployment's one currency; safe to ask again (the
 * CLI's `business:create`, the console's form posted twice): a business is known by its name, in
 * any case. The name with the same details is the business already opened, left as it is; with
 * other details it is a mistake, and nothing is opened.
 */
export function openBusiness(sql: Sql, actor: string, input: NewBusiness): Promise<BusinessOpening> {
  return sql.begin(async (tx): Promise<BusinessOpening> => {
    await lockBusinessName(tx, input.name)
    const named = await findBusinessesNamed(tx, input.name)
    const same = named.find((business) => differences(business, input).length === 0)
    if (same) return { kind: 'exists', business: same }
    if (named[0]) return { kind: 'conflict', business: named[0], differences: differences(named[0], input) }
    return { kind: 'opened', business: await openBusinessIn(tx, actor, input) }
  })
}

/** The differences as an operator reads them: `phone +2348010000000, not +2348020000000`. */
export function describeDifferences(found: BusinessDifference[]): string {
  return found.map(({ field, stored, given }) => `${field} ${stored ?? 'none'}, not ${given ?? 'none'}`).join(', ')
}

function differences(business: Business, input: NewBusiness): BusinessDifference[] {
  const given = { ...input, latitude: input.latitude ?? null, longitude: input.longitude ?? null }
  return BUSINESS_DETAILS.filter((field) => business[field] !== given[field]).map((field) => ({ field, stored: business[field], given: given[field] }))
}

/** Funding recorded from outside; a repeated reference credits once (and is not audited twice). Null: no such wallet. */
export function creditWalletAs(sql: Sql, actor: string, input: { businessId: string; amount: number; reference: string | null; livemode: boolean }): Promise<WalletCredit | null> {
  return sql.begin(async (tx) => {
    const wallet = await creditWallet(tx, input.businessId, input.amount, input.reference, input.livemode)
    if (wallet?.kind === 'credited') {
      await insertAudit(tx, {
        actor, action: 'wallet.credit', businessId: input.businessId, subject: `${input.livemode ? 'live' : 'test'} wallet`,
        before: { balance: toMajor(wallet.balance - input.amount) },
        after: { balance: toMajor(wallet.balance), amount: toMajor(input.amount), reference: input.reference },
      })
    }
    return wallet
  })
}

/** Revokes a key (idempotent; a repeat is not audited twice). `businessId` narrows it to one business's keys; null for the operator. */
export function revokeKeyAs(sql: Sql, actor: string, keyId: string, businessId: string | null): Promise<RevokedApiKey | null> {
  return sql.begin(async (tx) => {
    const revoked = await revokeApiKey(tx, keyId, businessId)
    if (revoked?.newlyRevoked) {
      await insertAudit(tx, { actor, action: 'key.revoke', businessId: revoked.businessId, subject: revoked.displayPrefix, before: { revoked: false }, after: { revoked_at: revoked.revokedAt } })
    }
    return revoked
  })
}

/**
 * Imports a rate-card file, its text as the operator uploaded it, as its card's next version;
 * throws `RateCardFileError` (nothing written, each problem at its line in `text`) when it is wrong.
 */
export async function importRateCardAs(sql: Sql, actor: string, text: string, currency: string): Promise<ImportedRateCard> {
  // Read before the transaction: a refused file never holds a connection.
  const card = readRateCardFile(text, currency)
  return sql.begin(async (tx) => {
    const imported = await writeRateCard(tx, card)
    await insertAudit(tx, { actor, action: 'ratecard.import', businessId: null, subject: imported.name, before: null, after: { rate_card_id: imported.rate_card_id, version: imported.version } })
    return imported
  })
}

export type RateCardEnabling = { kind: 'enabled' } | { kind: 'no_business' } | { kind: 'no_rate_card' }

/** Takes the business's card away (it prices by distance only); idempotent, audited when it changes something. False: no such business. */
export function disableRateCardAs(sql: Sql, actor: string, businessId: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const business = await findBusiness(tx, businessId)
    if (!business) return false
    if (business.rateCardId === null) return true
    const before = { rate_card_id: business.rateCardId, name: await findRateCardName(tx, business.rateCardId) }
    await setBusinessRateCard(tx, businessId, null)
    await insertAudit(tx, { actor, action: 'ratecard.disable', businessId, subject: before.name ?? business.rateCardId, before, after: { rate_card_id: null } })
    return true
  })
}

/** Enables a card for a business (replacing any earlier one); idempotent. */
export function enableRateCardAs(sql: Sql, actor: string, businessId: string, rateCardId: string): Promise<RateCardEnabling> {
  return sql.begin(async (tx) => {
    const business = await findBusiness(tx, businessId)
    if (!business) return { kind: 'no_business' } satisfies RateCardEnabling
    const name = await findRateCardName(tx, rateCardId)
    if (name === null) return { kind: 'no_rate_card' } satisfies RateCardEnabling
    const before = business.rateCardId === null ? null : { rate_card_id: business.rateCardId, name: await findRateCardName(tx, business.rateCardId) }
    await setBusinessRateCard(tx, businessId, rateCardId)
    await insertAudit(tx, { actor, action: 'ratecard.enable', businessId, subject: name, before, after: { rate_card_id: rateCardId, name } })
    return { kind: 'enabled' } satisfies RateCardEnabling
  })
}
