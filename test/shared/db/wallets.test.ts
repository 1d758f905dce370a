import { randomUUID } from 'node:crypto'
import t from 'tap'
import { createBusiness } from '../../../shared/db/businesses.js'
import { createWallet, creditWallet, dailySpend, debitWalletIfCovered, findWallet, listLedger, refundWallet, WALLET_MAX_KOBO, type LedgerEntry } from '../../../shared/db/wallets.js'
import { seedOrder } from '../../helpers/console.js'
import { WalletNotCoveredError } from '../../../shared/errors/wallet-not-covered-error.js'
import { genericPlanOf, schemaAt, useTestDb, walletIsBroken, walletsAgainstLedger } from '../../helpers/db.js'
import { newUuid } from '../../../shared/ids.js'

t.test('wallet repository keeps balance = credits − debits + refunds, with an exact balance_after', async (t) => {
  const { sql } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Shop', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  const ledgerNet = async () => (await sql`
    select coalesce(sum(case kind when 'debit' then -amount else amount end), 0)::int as net from ledger_entries where business_id = ${business.id}`)[0].net

  // Ten concurrent credits with one reference, as a retried bank webhook would send them.
  const credits = await Promise.all(Array.from({ length: 10 }, () => sql.begin((tx) => creditWallet(tx, business.id, 500_000, 'TRF-9'))))
  t.equal(credits.filter((credit) => credit?.kind === 'credited').length, 1, 'one credit wins')
  t.same(credits.map((credit) => credit!.balance), Array(10).fill(500_000), 'every caller sees the credited balance')

  const placementId = randomUUID()
  await sql.begin((tx) => debitWalletIfCovered(tx, business.id, 120_050, placementId, true))
  t.equal((await findWallet(sql, business.id))!.balance, 379_950)
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, business.id, 120_050, placementId, true)), { code: '23505' }, 'one debit per placement')
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, business.id, 400_000, randomUUID(), true)), WalletNotCoveredError, 'never below zero, and the ledger entry rolls back')
  await t.rejects(sql`update wallets set balance = balance - 400000 where business_id = ${business.id}`, { code: '23514' }, 'the check constraint stands behind it')
  // Sent with the COMMIT (shared/db/pipelined.ts): only an error in Postgres can roll it back.
  const walletless = await createBusiness(sql, newUuid(), { name: 'No wallet', phone: '2', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, walletless.id, 100, randomUUID(), true)), { code: '23502' }, 'a wallet that is not there fails in Postgres')
  await sql.begin((tx) => debitWalletIfCovered(tx, business.id, 0, randomUUID(), true))
  t.equal((await findWallet(sql, business.id))!.balance, 379_950, 'a free placement moves nothing')

  t.equal((await findWallet(sql, business.id))!.balance, await ledgerNet())

  // Every entry's balance_after replays from the oldest, and ends on the balance.
  const entries = (await listLedger(sql, business.id, { kinds: null, beforeSeq: null, limit: 100 })).reverse()
  let running = 0
  for (const entry of entries) {
    running += entry.kind === 'debit' ? -entry.amount : entry.amount
    t.equal(entry.balanceAfter, running, `entry ${entry.seq} (${entry.kind}) shows the balance it left`)
  }
  t.equal(running, (await findWallet(sql, business.id))!.balance)
  t.same(entries.map((entry) => entry.kind), ['credit', 'debit'])
  t.same((await listLedger(sql, business.id, { kinds: ['debit'], beforeSeq: null, limit: 100 })).map((entry) => entry.placementId), [placementId], 'filtered by kind')
  t.equal(await sql.begin((tx) => creditWallet(tx, randomUUID(), 100)), null, 'no wallet, no credit')
})

// Past 2^53 kobo a balance read as a number is no longer exact (migration 00037).
t.test('a wallet holds at most WALLET_MAX_KOBO: a credit past it changes nothing, a retry is still a retry', async (t) => {
  const { sql } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Full', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  t.match(await sql.begin((tx) => creditWallet(tx, business.id, WALLET_MAX_KOBO - 100, 'BIG')), { kind: 'credited', balance: WALLET_MAX_KOBO - 100 })
  t.match(await sql.begin((tx) => creditWallet(tx, business.id, 100, 'TO-THE-BRIM')), { kind: 'credited', balance: WALLET_MAX_KOBO }, 'up to the limit itself')
  t.match(await sql.begin((tx) => creditWallet(tx, business.id, 1, 'ONE-MORE')), { kind: 'over_limit', balance: WALLET_MAX_KOBO }, 'one kobo more is refused')
  t.match(await sql.begin((tx) => creditWallet(tx, business.id, 100, 'TO-THE-BRIM')), { kind: 'repeated', earlier: { amount: 100 } }, 'a retry of a credit made is answered as one')
  await t.rejects(sql`update wallets set balance = 9007199254740992 where business_id = ${business.id}`, { code: '23514' }, 'the database holds 2^53 − 1, where a balance stops being exact')
  t.equal((await findWallet(sql, business.id))!.balance, WALLET_MAX_KOBO)
  t.equal((await listLedger(sql, business.id, { kinds: null, beforeSeq: null, limit: 10 })).length, 2, 'two entries, no more')
  // A refund returns what was debited, and never fails for the credit's ceiling.
  const orderId = await seedOrder(sql, business.id)
  await sql.begin((tx) => refundWallet(tx, business.id, 100, orderId, true))
  t.equal((await findWallet(sql, business.id))!.balance, WALLET_MAX_KOBO + 100, 'a refund may take the balance past it')
})

// A transaction's id is its number in its wallet (migration 00036): the ledger's global row number
// told a business how many entries every other wallet wrote between two of its own.
t.test('each wallet numbers its own entries 1 … n, whatever the others write in between', async (t) => {
  const { sql } = await useTestDb(t)
  const open = async (name: string) => {
    const business = await createBusiness(sql, newUuid(), { name, phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
    await createWallet(sql, business.id, 'NGN')
    await createWallet(sql, business.id, 'NGN', false)
    return business.id
  }
  const [ada, bola] = [await open('Ada'), await open('Bola')]
  for (const [businessId, livemode] of [[ada, true], [ada, false], [bola, true]] as const) {
    await sql.begin((tx) => creditWallet(tx, businessId, 1_000_000, 'TOPUP', livemode))
  }
  // Debits of all three wallets at once, then a repeated credit and a refused debit.
  await Promise.all(Array.from({ length: 30 }, (_, i) => {
    const [businessId, livemode] = ([[ada, true], [ada, false], [bola, true]] as const)[i % 3]!
    return sql.begin((tx) => debitWalletIfCovered(tx, businessId, 1_000, randomUUID(), livemode))
  }))
  await sql.begin((tx) => creditWallet(tx, ada, 1_000_000, 'TOPUP', true))
  await t.rejects(sql.begin((tx) => debitWalletIfCovered(tx, ada, 10_000_000, randomUUID(), true)), WalletNotCoveredError)
  const numbersOf = async (businessId: string, livemode: boolean) =>
    (await listLedger(sql, businessId, { kinds: null, beforeSeq: null, limit: 100 }, livemode)).map((entry) => entry.seq).reverse()
  const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1)
  t.same(await numbersOf(ada, true), oneTo(11), 'live: the credit and ten debits; no number for the repeat or the refusal')
  t.same(await numbersOf(ada, false), oneTo(11), 'the test wallet counts apart')
  t.same(await numbersOf(bola, true), oneTo(11), 'another business counts apart')
  const balances = await listLedger(sql, ada, { kinds: null, beforeSeq: null, limit: 100 }, true)
  t.equal(balances[0]!.balanceAfter, (await findWallet(sql, ada))!.balance, 'the last number is the last balance')
  const page = await listLedger(sql, ada, { kinds: null, beforeSeq: 5, limit: 100 }, true)
  t.same(page.map((entry) => entry.seq), [4, 3, 2, 1], 'a page before number 5')
})

t.test('the numbering migration numbers each wallet\'s entries in their order, and names each wallet apart', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, 35)
  const businesses = [newUuid(), newUuid()]
  for (const id of businesses) {
    await sql`insert into businesses (id, name, phone, address, state, currency) values (${id}, ${'Shop ' + id}, '1', 'Yaba, Lagos', 'Lagos', 'NGN')`
    await sql`insert into wallets (business_id, livemode, balance, currency) values (${id}, true, 600, 'NGN'), (${id}, false, 600, 'NGN')`
  }
  // Entries of the four wallets interleaved, as the global row number saw them.
  for (let n = 1; n <= 3; n++) {
    for (const id of businesses) {
      for (const livemode of [true, false]) {
        await sql`insert into ledger_entries (business_id, livemode, kind, amount, reference, balance_after) values (${id}, ${livemode}, 'credit', 200, ${'r' + n}, ${200 * n})`
      }
    }
  }
  await migrateRest()
  for (const id of businesses) {
    for (const livemode of [true, false]) {
      const entries = await listLedger(sql, id, { kinds: null, beforeSeq: null, limit: 10 }, livemode)
      t.same(entries.map((entry) => [entry.seq, entry.reference, entry.balanceAfter]), [[3, 'r3', 600], [2, 'r2', 400], [1, 'r1', 200]], 'numbered 1 … 3 in their order')
    }
  }
  t.same((await walletsAgainstLedger(sql)).filter(walletIsBroken), [], 'each wallet knows its last number')
  const names = await sql<{ ledgerName: string }[]>`select ledger_name from wallets`
  t.equal(new Set(names.map((row) => row.ledgerName)).size, 4, 'every wallet has a name of its own')
  t.ok(names.every((row) => /^[0-9A-F]{16}$/.test(row.ledgerName)), 'sixteen hex digits')
})

// During a rolling deploy (and after a rollback) the image before migration 00036 runs on its
// schema: its statements, as that image sends them, write entries without a number.
t.test("the previous image's credit and debit still work, and their entries are numbered in turn (its refund is its debit's shape)", async (t) => {
  const { sql } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Rolling', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  const id = business.id
  // The previous image's credit: lock, insert, update.
  await sql.begin(async (tx) => {
    const [wallet] = await tx`select balance from wallets where business_id = ${id} and livemode for update`
    await tx`insert into ledger_entries (business_id, livemode, kind, amount, reference, balance_after)
      values (${id}, true, 'credit', 5000, 'OLD-1', ${Number(wallet!.balance) + 5000})
      on conflict (business_id, livemode, reference) where kind = 'credit' and reference is not null do nothing returning id`
    await tx`update wallets set balance = balance + 5000, updated_at = now() where business_id = ${id} and livemode`
  })
  // Its retry of that credit: nothing inserted, no number taken, as its ON CONFLICT had it.
  const retried = await sql.begin(async (tx) => {
    await tx`select balance from wallets where business_id = ${id} and livemode for update`
    return tx`insert into ledger_entries (business_id, livemode, kind, amount, reference, balance_after)
      values (${id}, true, 'credit', 5000, 'OLD-1', 10000)
      on conflict (business_id, livemode, reference) where kind = 'credit' and reference is not null do nothing returning id`
  })
  t.equal(retried.length, 0, 'the repeated reference inserts nothing, as that image expects')
  // This image's credit between them.
  await sql.begin((tx) => creditWallet(tx, id, 1000, 'NEW-1'))
  // The previous image's debit: one statement, the wallet updated in its CTE.
  await sql.begin((tx) => tx`
    with wallet as (
      update wallets set balance = balance - 700, updated_at = now() where business_id = ${id} and livemode = true returning balance)
    insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after)
    select ${id}, true, 'debit', 700, ${randomUUID()}, wallet.balance from (values (1)) as one left join wallet on true`)
  await sql.begin((tx) => debitWalletIfCovered(tx, id, 300, randomUUID(), true))
  const entries = (await listLedger(sql, id, { kinds: null, beforeSeq: null, limit: 10 })).reverse()
  t.same(entries.map((entry) => [entry.seq, entry.kind, entry.amount, entry.balanceAfter]), [[1, 'credit', 5000, 5000], [2, 'credit', 1000, 6000], [3, 'debit', 700, 5300], [4, 'debit', 300, 5000]], 'numbered 1 … 4 whichever image wrote them')
  t.same((await walletsAgainstLedger(sql)).filter(walletIsBroken), [], 'and the wallet knows its last number')
  // The previous image's debit of a wallet that is not there still fails in Postgres.
  await t.rejects(sql.begin((tx) => tx`
    with wallet as (
      update wallets set balance = balance - 1 where business_id = ${randomUUID()} and livemode = true returning balance)
    insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after)
    select ${id}, true, 'debit', 1, ${randomUUID()}, wallet.balance from (values (1)) as one left join wallet on true`), { code: '23502' })
})

// GET /v2/business/wallet/transactions?type=… (migration 00031): credits and refunds, a few
// among a placement's debit each, are read from their own index, even by a generic plan.
t.test('a statement of credits only is read from their index, not found among the debits', async (t) => {
  const { sql, config } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Tops up weekly', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  await sql.begin((tx) => creditWallet(tx, business.id, 10_000_000, 'TOPUP-1'))
  // 2000 placements' debits after the top-up, written as the debit writes them, and the wallet with them.
  await sql`
    insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after, seq)
    select ${business.id}, true, 'debit', 100, gen_random_uuid(), 10000000 - 100 * n, 1 + n from generate_series(1, 2000) n`
  await sql`update wallets set balance = balance - 200000, entries = entries + 2000 where business_id = ${business.id} and livemode`
  await sql`analyze ledger_entries`

  const kindsOf = async (kinds: LedgerEntry['kind'][] | null, limit = 21) =>
    (await listLedger(sql, business.id, { kinds, beforeSeq: null, limit })).map((entry) => entry.kind)
  t.same(await kindsOf(['credit']), ['credit'], 'the one credit')
  t.same(await kindsOf(['refund']), [], 'no refund')
  t.same(await kindsOf(['credit', 'refund']), ['credit'])
  t.same(await kindsOf(['debit'], 3), ['debit', 'debit', 'debit'], 'the debits, a page at once')
  t.equal((await kindsOf(null, 100)).length, 100, 'no filter: a full page')

  const planOf = (kinds: LedgerEntry['kind'][]) => genericPlanOf(t, config, (reads) => listLedger(reads, business.id, { kinds, beforeSeq: null, limit: 21 }))
  t.match(await planOf(['credit']), /"Index Name":"ledger_credits_refunds"/, 'credits: read from their index')
  t.match(await planOf(['refund', 'credit']), /"Index Name":"ledger_credits_refunds"/, 'credits and refunds together too')
  t.notMatch(await planOf(['debit', 'credit']), /ledger_credits_refunds/, 'with the debits: newest first on the business\'s index')
})

// The console's overview charts a business's spend over 30 days (dailySpend): its read starts a day
// before the window by entry number, so it walks the window, not the whole ledger, which is kept for good.
t.test('the spend by day counts the window only, and reads from a day before it on', async (t) => {
  const { sql, config } = await useTestDb(t)
  const business = await createBusiness(sql, newUuid(), { name: 'Ships daily', phone: '1', address: 'Yaba, Lagos', state: 'Lagos', currency: 'NGN' })
  await createWallet(sql, business.id, 'NGN')
  await sql.begin((tx) => creditWallet(tx, business.id, 10_000_000, 'TOPUP-1'))
  const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z')
  const windowStart = new Date(today.getTime() - 29 * 86_400_000)
  // Debits in the order they were made: 2000 of one kobo long ago, then around the window's first moment.
  await sql`
    insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after, created_at, seq)
    select ${business.id}, true, 'debit', 1, gen_random_uuid(), 0, ${windowStart}::timestamptz - make_interval(days => 100) + make_interval(mins => n), 1 + n
    from generate_series(1, 2000) n`
  const debits = [
    { at: new Date(windowStart.getTime() - 1), amount: 200 },
    { at: windowStart, amount: 300 },
    { at: new Date(windowStart.getTime() + 3_600_000), amount: 50 },
    { at: new Date(), amount: 400 },
  ]
  for (const [i, debit] of debits.entries()) {
    await sql`insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after, created_at, seq)
      values (${business.id}, true, 'debit', ${debit.amount}, gen_random_uuid(), 0, ${debit.at}, ${2002 + i})`
  }
  await sql`update wallets set balance = balance - ${2000 + debits.reduce((sum, debit) => sum + debit.amount, 0)}, entries = ${2001 + debits.length}
    where business_id = ${business.id} and livemode`
  await sql`analyze ledger_entries`

  t.same(await dailySpend(sql, business.id, true, 30), [
    { day: windowStart.toISOString().slice(0, 10), spent: 350 },
    { day: today.toISOString().slice(0, 10), spent: 400 },
  ], 'the first day from its first moment, and today; nothing before')
  t.same(await dailySpend(sql, business.id, false, 30), [], 'test mode apart')
  const plan = await genericPlanOf(t, config, (reads) => dailySpend(reads, business.id, true, 30))
  t.match(plan, /"Index Cond":"\([^"]*seq > COALESCE/, 'read by number from the day before the window on')
})
