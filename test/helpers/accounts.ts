import { readFileSync } from 'node:fs'
import { createApiKey } from '../../shared/accounts/api-keys.js'
import { demoRateCardPath } from '../../shared/accounts/demo-seed.js'
import { openSandbox } from '../../shared/accounts/sandbox.js'
import type { ApiKeyScope } from '../../shared/db/api-keys.js'
import { createBusiness } from '../../shared/db/businesses.js'
import { setBusinessRateCard } from '../../shared/db/businesses.js'
import type { ImportedRateCard } from '../../shared/db/rate-cards.js'
import { importRateCard } from '../../shared/pricing/rate-card-file.js'
import type { Sql } from '../../shared/db/sql.js'
import { createWallet, creditWallet } from '../../shared/db/wallets.js'
import { toMinor } from '../../shared/money.js'
import { newUuid } from '../../shared/ids.js'

/** The demo card `demo:seed` imports, as a plain object tests can alter. */
export function demoCardFile(): any {
  return JSON.parse(readFileSync(demoRateCardPath, 'utf8'))
}

export interface SeededAccount {
  businessId: string
  apiKey: string
  card: ImportedRateCard | null
  /** Option ids of the card by label, e.g. `options['5-tonne truck']`. */
  options: Record<string, string>
  /** A sandbox key with the same scopes, when asked for (`sandbox`): its test wallet holds `sandbox` naira. */
  testApiKey: string | null
}

/** `seedAccount` on `sql`, keeping the id of every business seeded so a test can check all their ledgers at its end. */
export function accountSeeder(sql: Sql): { account: (input?: Parameters<typeof seedAccount>[1]) => Promise<SeededAccount>; businesses: string[] } {
  const businesses: string[] = []
  const account = async (input: Parameters<typeof seedAccount>[1] = {}) => {
    const seeded = await seedAccount(sql, input)
    businesses.push(seeded.businessId)
    return seeded
  }
  return { account, businesses }
}

/**
 * A business as the operator would set one up: wallet funded (major units), an API key, and
 * optionally a rate card imported and enabled. Goes through the same repositories as the CLI.
 */
export async function seedAccount(sql: Sql, input: { balance?: number; card?: unknown | null; scopes?: ApiKeyScope[]; name?: string; sandbox?: number } = {}): Promise<SeededAccount> {
  return sql.begin(async (tx) => {
    const business = await createBusiness(tx, newUuid(), {
      name: input.name ?? 'Ada Stores',
      phone: '+2348010000000',
      address: '12 Admiralty Way, Lekki',
      state: 'Lagos',
      latitude: 6.4433,
      longitude: 3.4723,
      currency: 'NGN',
    })
    await createWallet(tx, business.id, 'NGN')
    if (input.balance) await creditWallet(tx, business.id, toMinor(input.balance), 'seed')
    const key = await createApiKey(tx, business.id, input.scopes ?? ['orders:write'])
    let card: ImportedRateCard | null = null
    if (input.card !== null) {
      const file = input.card ?? { ...demoCardFile(), name: `Card ${business.id}` }
      card = await importRateCard(tx, file, 'NGN')
      await setBusinessRateCard(tx, business.id, card.rate_card_id)
    }
    const options = Object.fromEntries((card?.options ?? []).map((option) => [option.label, option.id]))
    let testApiKey: string | null = null
    if (input.sandbox !== undefined) {
      await openSandbox(tx, business, toMinor(input.sandbox))
      testApiKey = (await createApiKey(tx, business.id, input.scopes ?? ['orders:write'], false)).apiKey
    }
    return { businessId: business.id, apiKey: key.apiKey, card, options, testApiKey }
  }) as Promise<SeededAccount>
}
