import { randomUUID } from 'node:crypto'
import t from 'tap'
import { createBusiness } from '../../../shared/db/businesses.js'
import { createWallet, creditWallet, debitWalletIfCovered, findWallet, lockWallet } from '../../../shared/db/wallets.js'
import { WalletNotCoveredError } from '../../../shared/errors/wallet-not-covered-error.js'
import { useTestDb } from '../../helpers/db.js'
import { newUuid } from '../../../shared/ids.js'

t.test('wallet repository keeps balance = credits − debits', async (t) => {
  const { sql } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Shop', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  const ledgerNet = async () => (await sql`
    select coalesce(sum(case kind when 'credit' then amount else -amount end), 0)::int as net from ledger_entries where business_id = ${business.id}`)[0].net

  // Ten concurrent credits with one reference, as a retried bank webhook would send them.
  const credits = await Promise.all(Array.from({ length: 10 }, () => sql.begin((tx) => creditWallet(tx, business.id, 500_000, 'TRF-9'))))
  t.equal(credits.filter((credit) => credit!.credited).length, 1, 'one credit wins')
  t.same(credits.map((credit) => credit!.balance), Array(10).fill(500_000), 'every caller sees the credited balance')

  const placementId = randomUUID()
  const debited = await sql.begin(async (tx) => {
    await lockWallet(tx, business.id)
    return debitWalletIfCovered(tx, business.id, 120_050, placementId)
  })
  t.equal(debited.balance, 379_950)
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, business.id, 120_050, placementId)), { code: '23505' }, 'one debit per placement')
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, business.id, 400_000, randomUUID())), WalletNotCoveredError, 'never below zero, and the ledger entry rolls back')
  await t.rejects(sql`update wallets set balance = balance - 400000 where business_id = ${business.id}`, { code: '23514' }, 'the check constraint stands behind it')
  t.equal((await sql.begin((tx) => debitWalletIfCovered(tx, business.id, 0, randomUUID()))).balance, 379_950, 'a free placement moves nothing')

  t.equal((await findWallet(sql, business.id))!.balance, await ledgerNet())
  t.equal(await sql.begin((tx) => creditWallet(tx, randomUUID(), 100)), null, 'no wallet, no credit')
})
