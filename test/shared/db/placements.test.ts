import t, { type Test } from 'tap'
import { createPendingPlacement, findPlacementWork, openPlacement } from '../../../shared/db/placements.js'
import { DEFAULT_PLATFORM_RATES, savePlatformRates } from '../../../shared/db/platform-rates.js'
import { setBusinessRateCard } from '../../../shared/db/businesses.js'
import { newUuid } from '../../../shared/ids.js'
import { importRateCard } from '../../../shared/pricing/rate-card-file.js'
import { demoCardFile, seedAccount } from '../../helpers/accounts.js'
import { holdLock, lockWaiters, useTestDb } from '../../helpers/db.js'
import { waitFor } from '../../helpers/processes.js'

const shipment = { dropoff_address: '3 Allen Avenue, Ikeja', dropoff_state: 'Lagos', weight: 2, quantity: 1, recipient_name: 'Bola', recipient_phone: '+2348020000000', item_name: 'Shoes' }

/** A funded live business with the demo card, and one pending placement of it. */
async function pendingPlacement(t: Test) {
  const { sql } = await useTestDb(t)
  const account = await seedAccount(sql, { balance: 5000 })
  const scope = { businessId: account.businessId, livemode: true }
  const placementId = newUuid()
  await createPendingPlacement(sql, { id: placementId, ...scope, idempotencyKey: null, requestHash: 'h', shipmentsJson: JSON.stringify([shipment]) })
  return { sql, account, scope, placementId }
}

t.test('the worker reads a placement, its business and the rates in force in one statement each', async (t) => {
  const { sql, account, scope, placementId } = await pendingPlacement(t)

  const work = await findPlacementWork(sql, placementId, account.businessId)
  t.match(work, { status: 'pending', livemode: true, shipments: [shipment], business: { id: account.businessId, name: 'Ada Stores', rateCardId: account.card!.rate_card_id }, roadFactor: DEFAULT_PLATFORM_RATES.roadFactor })
  t.equal(await findPlacementWork(sql, placementId, newUuid()), null, "another business's placement reads as unknown")
  t.equal(await findPlacementWork(sql, newUuid(), account.businessId), null, 'an unknown placement reads as unknown')

  const opened = await sql.begin((tx) => openPlacement(tx, placementId, scope))
  t.match(opened, { status: 'pending', walletBalance: 500_000, rates: DEFAULT_PLATFORM_RATES }, 'no rates set: the defaults')
  t.equal(opened!.card!.rateCardId, account.card!.rate_card_id)
  t.ok(opened!.now instanceof Date && opened!.now.getMilliseconds() === opened!.now.getTime() % 1000, 'a clock to the millisecond')
  t.equal(await sql.begin((tx) => openPlacement(tx, newUuid(), scope)), null, 'an unknown placement opens nothing')

  // A re-import makes a new version in force; rates set by an operator are read as set.
  const reimported = await sql.begin((tx) => importRateCard(tx, { ...demoCardFile(), name: `Card ${account.businessId}` }, 'NGN'))
  await sql.begin((tx) => savePlatformRates(tx, { ...DEFAULT_PLATFORM_RATES, perKm: 15_050, roadFactor: 1.45 }))
  const reopened = await sql.begin((tx) => openPlacement(tx, placementId, scope))
  t.same(reopened!.card, { rateCardId: account.card!.rate_card_id, versionId: reopened!.card!.versionId })
  t.not(reopened!.card!.versionId, opened!.card!.versionId, 'the newest version is in force')
  t.equal(reimported.version, 2)
  t.same(reopened!.rates, { ...DEFAULT_PLATFORM_RATES, perKm: 15_050, roadFactor: 1.45 })
  t.equal((await findPlacementWork(sql, placementId, account.businessId))!.roadFactor, 1.45)

  await setBusinessRateCard(sql, account.businessId, null)
  t.equal((await sql.begin((tx) => openPlacement(tx, placementId, scope)))!.card, null, 'no card enabled')
  t.equal((await sql.begin((tx) => openPlacement(tx, placementId, { ...scope, livemode: false })))!.walletBalance, null, 'no test wallet')
})

t.test('the placement is locked before the clock is read: a waiting transaction is never stamped before the one it waited for', async (t) => {
  const { sql, scope, placementId } = await pendingPlacement(t)

  const held = await holdLock(sql, (tx) => tx`select id from placements where id = ${placementId} for update`)
  const opening = sql.begin((tx) => openPlacement(tx, placementId, scope))
  t.ok(await waitFor(async () => (await lockWaiters(sql, held.pid)).length > 0, 10_000), 'the opening statement waits on the placement lock')
  const [{ releasedAt }] = await sql<{ releasedAt: Date }[]>`select clock_timestamp() as released_at`
  await held.release()
  const opened = await opening
  t.ok(opened!.now.getTime() >= releasedAt.getTime(), `stamped ${opened!.now.toISOString()}, not before the holder was let go (after ${releasedAt.toISOString()})`)
})
