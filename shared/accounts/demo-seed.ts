import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { CommonConfig } from '../config.js'
import { createApiKey } from './api-keys.js'
import { openSandbox } from './sandbox.js'
import { createBusiness, findDemoBusiness, setBusinessRateCard } from '../db/businesses.js'
import { importRateCard } from '../pricing/rate-card-file.js'
import { PG, type Sql } from '../db/sql.js'
import { createWallet, creditWallet } from '../db/wallets.js'
import { toMajor, toMinor } from '../money.js'
import type { Invalidation } from '../invalidation.js'
import { newUuid } from '../ids.js'
import { projectRoot } from '../project-root.js'

// The JSON file is not compiled, so both src and dist resolve it from the project root.
export const demoRateCardPath = path.join(projectRoot, 'shared', 'pricing', 'demo-rate-card.json')

const DEMO_BUSINESS = {
  name: 'Demo Shop Lagos',
  phone: '+2348000000000',
  address: '1 Adeola Odeku Street, Victoria Island, Lagos',
  state: 'Lagos',
  latitude: 6.4281,
  longitude: 3.4219,
}
// Ten million naira: enough for every demo and benchmark run without a top-up.
const DEMO_BALANCE_KOBO = 1_000_000_000
// A fixed reference makes the top-up happen once however often the demo is seeded.
const DEMO_TOP_UP_REFERENCE = 'demo-seed:initial-top-up'

/** Tells the caches what changed, after the commit; the caller decides what a lost message costs. */
export type Announce = (message: Invalidation) => Promise<void>

/** What `demo:seed` prints and the launcher shows: the API key is new on every call. */
export interface DemoSeed {
  business_id: string
  api_key: string
  /** A sandbox key (`ck_test_`): test orders, the test wallet, the sandbox courier. */
  test_api_key: string
  rate_card_id: string
  balance: number
  currency: string
}

/**
 * Makes the demo account ready to quote and place: reuses the demo business, imports the demo
 * card only when the business has none, enables it, funds the wallet once, and issues a fresh
 * `orders:write` and `webhooks:write` key, live and test (earlier keys stay valid; the first test
 * key opens the sandbox wallet). One transaction; invalidations after it.
 */
export async function demoSeed(sql: Sql, announce: Announce, config: Pick<CommonConfig, 'CURRENCY' | 'SANDBOX_WALLET_START'>): Promise<DemoSeed> {
  const card = JSON.parse(readFileSync(demoRateCardPath, 'utf8')) as unknown
  const seedOnce = () => sql.begin(async (tx) => {
    const existing = await findDemoBusiness(tx)
    const business = existing ?? (await createBusiness(tx, newUuid(), { ...DEMO_BUSINESS, currency: config.CURRENCY, isDemo: true }))
    if (!existing) await createWallet(tx, business.id, business.currency)
    // Importing again would make a new card version with new option ids, breaking cached ids.
    const rateCardId = business.rateCardId ?? (await importRateCard(tx, card, config.CURRENCY)).rate_card_id
    const cardChanged = rateCardId !== business.rateCardId
    if (cardChanged) await setBusinessRateCard(tx, business.id, rateCardId)
    const wallet = (await creditWallet(tx, business.id, DEMO_BALANCE_KOBO, DEMO_TOP_UP_REFERENCE))!
    const key = await createApiKey(tx, business.id, ['orders:write', 'webhooks:write'])
    await openSandbox(tx, business, toMinor(config.SANDBOX_WALLET_START))
    const testKey = await createApiKey(tx, business.id, ['orders:write', 'webhooks:write'], false)
    return { business, rateCardId, cardChanged, wallet, key, testKey }
  })
  // Two seeds racing on a fresh database both try to create the demo business; the one-demo
  // index refuses the second, which then finds the first one's business.
  const seeded = await seedOnce().catch((err: { code?: string }) => {
    if (err.code === PG.uniqueViolation) return seedOnce()
    throw err
  })
  if (seeded.cardChanged) {
    await announce({ kind: 'rate-card', rateCardId: seeded.rateCardId })
    await announce({ kind: 'business', businessId: seeded.business.id })
  }
  await announce({ kind: 'api-key', keyHash: seeded.key.keyHash })
  await announce({ kind: 'api-key', keyHash: seeded.testKey.keyHash })
  return {
    business_id: seeded.business.id,
    api_key: seeded.key.apiKey,
    test_api_key: seeded.testKey.apiKey,
    rate_card_id: seeded.rateCardId,
    balance: toMajor(seeded.wallet.balance),
    currency: seeded.wallet.currency,
  }
}
