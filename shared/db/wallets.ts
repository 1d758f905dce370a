import { WalletNotCoveredError } from '../errors/wallet-not-covered-error.js'
import postgres from 'postgres'
import { MAX_EXACT_KOBO } from '../money.js'
import { literalList, PG, type Db, type Tx } from './sql.js'

/** A business wallet of one mode (live, or the sandbox's test wallet), balance in kobo. */
export interface Wallet {
  businessId: string
  livemode: boolean
  balance: number
  currency: string
}

const WALLET_COLUMNS = 'business_id, livemode, balance, currency'

/**
 * Every business has a live wallet, created empty with it, and a test wallet once it has a
 * test key. Creating one that exists already changes nothing.
 */
export async function createWallet(db: Db, businessId: string, currency: string, livemode = true): Promise<Wallet | null> {
  const [row] = await db<Wallet[]>`
    insert into wallets (business_id, livemode, balance, currency) values (${businessId}, ${livemode}, 0, ${currency})
    on conflict (business_id, livemode) do nothing
    returning ${db.unsafe(WALLET_COLUMNS)}`
  return row ?? null
}

export async function findWallet(db: Db, businessId: string, livemode = true): Promise<Wallet | null> {
  const [row] = await db<Wallet[]>`select ${db.unsafe(WALLET_COLUMNS)} from wallets where business_id = ${businessId} and livemode = ${livemode}`
  return row ?? null
}

/**
 * Locks the wallet row until the transaction ends, so a balance check and the debit that
 * follows it cannot interleave with another placement or a credit.
 */
export async function lockWallet(tx: Tx, businessId: string, livemode = true): Promise<Wallet | null> {
  const [row] = await tx<Wallet[]>`
    select ${tx.unsafe(WALLET_COLUMNS)} from wallets where business_id = ${businessId} and livemode = ${livemode} for update`
  return row ?? null
}

/**
 * The most a credit takes a wallet to, in kobo (ten trillion naira): every balance, and each
 * entry's balance_after, stays exact as a JSON number. A refund may take it past (it returns what
 * was debited, and never fails); the database holds 2^53 − 1, where exactness ends (migration 00037).
 */
export const WALLET_MAX_KOBO = MAX_EXACT_KOBO

/** How a credit went, with the wallet as it stands after it. */
export type WalletCredit = Wallet & (
  | { kind: 'credited' }
  // The reference was credited before, and nothing changed: a retry names the same amount, a mistake another.
  | { kind: 'repeated'; earlier: { amount: number; createdAt: Date } }
  // It would take the balance past WALLET_MAX_KOBO, and nothing changed.
  | { kind: 'over_limit' })

/**
 * Credits `amount` kobo and writes its ledger entry in the caller's transaction, so
 * `balance = credits − debits + refunds` holds at every commit. A reference already credited to
 * this wallet credits nothing and returns the current balance, and so does a credit past
 * WALLET_MAX_KOBO. Null when the business has no wallet.
 */
export async function creditWallet(tx: Tx, businessId: string, amount: number, reference: string | null = null, livemode = true): Promise<WalletCredit | null> {
  const wallet = await lockWallet(tx, businessId, livemode)
  if (!wallet) return null
  // Under the wallet's lock, a credit of the same reference made at the same time has committed
  // and is found here (the ledger's unique index stands behind it). A retry of a credit that was
  // made is a retry, however full the wallet is now.
  const earlier = reference === null ? null : await earlierCredit(tx, businessId, livemode, reference)
  if (earlier) return { ...wallet, kind: 'repeated', earlier }
  if (wallet.balance + amount > WALLET_MAX_KOBO) return { ...wallet, kind: 'over_limit' }
  await tx`
    insert into ledger_entries (business_id, livemode, kind, amount, reference, balance_after, seq)
    select ${businessId}, ${livemode}, 'credit', ${amount}, ${reference}, ${wallet.balance + amount}, entries + 1
    from wallets where business_id = ${businessId} and livemode = ${livemode}`
  const [row] = await tx<Wallet[]>`
    update wallets set balance = balance + ${amount}, entries = entries + 1, updated_at = now() where business_id = ${businessId} and livemode = ${livemode}
    returning ${tx.unsafe(WALLET_COLUMNS)}`
  return { ...row, kind: 'credited' }
}

async function earlierCredit(tx: Tx, businessId: string, livemode: boolean, reference: string): Promise<{ amount: number; createdAt: Date } | null> {
  const [earlier] = await tx<{ amount: number; createdAt: Date }[]>`
    select amount, created_at from ledger_entries
    where business_id = ${businessId} and livemode = ${livemode} and reference = ${reference} and kind = 'credit'`
  return earlier ?? null
}

/**
 * Debits a placement's total with its ledger entry, in one statement: the update takes the
 * wallet's row lock and the wallet's next entry number, then the ledger entry is written with its
 * number and balance_after. Meant as the
 * transaction's last statement, so the lock, which every placement of the business waits for, is
 * held for the commit only; sent with the COMMIT (shared/db/pipelined.ts), so every refusal is
 * Postgres's own and aborts the transaction it is in: a balance that no longer covers the amount
 * breaks `balance >= 0` (23514, thrown as `WalletNotCoveredError`), a missing wallet leaves the
 * entry's `balance_after` null (23502), and the ledger's unique index (23505) refuses a second
 * debit for one placement.
 */
export async function debitWalletIfCovered(tx: Tx, businessId: string, amount: number, placementId: string, livemode: boolean): Promise<void> {
  // The ledger refuses zero amounts, and a free placement moves no money anyway.
  if (amount === 0) return
  try {
    await tx`
      with wallet as (
        update wallets set balance = balance - ${amount}, entries = entries + 1, updated_at = now()
        where business_id = ${businessId} and livemode = ${livemode}
        returning balance, entries)
      insert into ledger_entries (business_id, livemode, kind, amount, placement_id, balance_after, seq)
      select ${businessId}, ${livemode}, 'debit', ${amount}, ${placementId}, wallet.balance, wallet.entries
      from (values (1)) as one left join wallet on true`
  } catch (err) {
    if (err instanceof postgres.PostgresError && err.code === PG.checkViolation) throw new WalletNotCoveredError(`wallet of ${businessId} no longer covers ${amount}`)
    throw err
  }
}

/**
 * Credits a cancelled order's refund with its ledger entry, in one statement that takes the
 * wallet's row lock before the entry is numbered. One refund per order (unique index).
 */
export async function refundWallet(tx: Tx, businessId: string, amount: number, orderId: string, livemode: boolean): Promise<void> {
  if (amount === 0) return
  await tx`
    with wallet as (
      update wallets set balance = balance + ${amount}, entries = entries + 1, updated_at = now() where business_id = ${businessId} and livemode = ${livemode}
      returning balance, entries)
    insert into ledger_entries (business_id, livemode, kind, amount, order_id, balance_after, seq)
    select ${businessId}, ${livemode}, 'refund', ${amount}, ${orderId}, wallet.balance, wallet.entries from wallet`
}

export interface WalletView extends Wallet {
  updatedAt: Date
}

export async function findWalletView(db: Db, businessId: string, livemode: boolean): Promise<WalletView | null> {
  const [row] = await db<WalletView[]>`
    select ${db.unsafe(WALLET_COLUMNS)}, updated_at from wallets where business_id = ${businessId} and livemode = ${livemode}`
  return row ?? null
}

export interface LedgerEntry {
  /** The entry's number in its wallet (1, 2, 3 …, taken under the wallet lock): its place in the statement. */
  seq: number
  /** The wallet's random name, which with the number makes the entry's public id (`transactionId`). */
  ledgerName: string
  kind: 'credit' | 'debit' | 'refund'
  amount: number
  balanceAfter: number
  reference: string | null
  placementId: string | null
  orderId: string | null
  createdAt: Date
}

export interface LedgerFilter {
  kinds: LedgerEntry['kind'][] | null
  /** The number of the last entry of the previous page. */
  beforeSeq: number | null
  limit: number
}

/** The wallet's name beside each of its entries: one read of the wallet for the whole statement (an InitPlan). */
const ledgerNameOf = (db: Db, businessId: string, livemode: boolean) =>
  db`(select ledger_name from wallets where business_id = ${businessId} and livemode = ${livemode}) as ledger_name`

/** The kinds a business has few of, indexed apart from the debits (migration 00031). */
const UNCOMMON_KINDS: readonly LedgerEntry['kind'][] = ['credit', 'refund']

/**
 * A wallet's statement, newest first: entry numbers are taken under the wallet lock, so they order
 * it exactly. Asked for credits or refunds only, it names that set in the text, so even a prepared
 * statement's generic plan reads them from their index instead of walking every debit.
 */
export async function listLedger(db: Db, businessId: string, filter: LedgerFilter, livemode = true): Promise<LedgerEntry[]> {
  const uncommonOnly = filter.kinds !== null && filter.kinds.every((kind) => UNCOMMON_KINDS.includes(kind))
  return db<LedgerEntry[]>`
    select seq, ${ledgerNameOf(db, businessId, livemode)}, kind, amount, balance_after, reference, placement_id, order_id, created_at
    from ledger_entries
    where business_id = ${businessId} and livemode = ${livemode}
      ${filter.kinds ? db`and kind = any(${filter.kinds}::text[])` : db``}
      ${uncommonOnly ? db`and kind in (${literalList(db, UNCOMMON_KINDS)})` : db``}
      ${filter.beforeSeq !== null ? db`and seq < ${filter.beforeSeq}` : db``}
    order by seq desc limit ${filter.limit}`
}

/** The next `limit` entries after number `afterSeq`, oldest first: the statement export reads the whole ledger in these. */
export async function ledgerAfter(db: Db, businessId: string, livemode: boolean, afterSeq: number, limit: number): Promise<LedgerEntry[]> {
  return db<LedgerEntry[]>`
    select seq, ${ledgerNameOf(db, businessId, livemode)}, kind, amount, balance_after, reference, placement_id, order_id, created_at
    from ledger_entries
    where business_id = ${businessId} and livemode = ${livemode} and seq > ${afterSeq}
    order by seq limit ${limit}`
}

/**
 * Spend per UTC day over the last `days` days: debits less refunds, in kobo, days without any left
 * out. No index has the ledger by time, but its numbers follow time, so the read starts after the
 * newest entry made a day before the window: the business's index walks the window and a day, not
 * the whole ledger (kept for good). The day's margin covers a transaction that began before the
 * window but took its number after one begun inside it; none is open for a day.
 */
export async function dailySpend(db: Db, businessId: string, livemode: boolean, days: number): Promise<{ day: string; spent: number }[]> {
  return db<{ day: string; spent: number }[]>`
    with window_start as (select date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => ${days - 1}) as at)
    select to_char(date_trunc('day', created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
      sum(case kind when 'debit' then amount when 'refund' then -amount else 0 end)::bigint as spent
    from ledger_entries
    where business_id = ${businessId} and livemode = ${livemode} and kind in ('debit', 'refund')
      and created_at >= (select at from window_start)
      and seq > coalesce((
        select seq from ledger_entries
        where business_id = ${businessId} and livemode = ${livemode} and created_at < (select at from window_start) - interval '1 day'
        order by seq desc limit 1), 0)
    group by 1 order by 1`
}
