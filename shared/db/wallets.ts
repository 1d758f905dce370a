import type { Db, Tx } from './sql.js'

/** A business wallet, balance in kobo. */
export interface Wallet {
  businessId: string
  balance: number
  currency: string
}

interface WalletRow {
  business_id: string
  balance: number
  currency: string
}

const toWallet = (row: WalletRow): Wallet => ({ businessId: row.business_id, balance: row.balance, currency: row.currency })

/** Every business has exactly one wallet, created empty with it. */
export async function createWallet(db: Db, businessId: string, currency: string): Promise<Wallet> {
  const [row] = await db<WalletRow[]>`
    insert into wallets (business_id, balance, currency) values (${businessId}, 0, ${currency})
    returning business_id, balance, currency`
  return toWallet(row)
}

export async function findWallet(db: Db, businessId: string): Promise<Wallet | null> {
  const [row] = await db<WalletRow[]>`select business_id, balance, currency from wallets where business_id = ${businessId}`
  return row ? toWallet(row) : null
}

/**
 * Locks the wallet row until the transaction ends, so a balance check and the debit that
 * follows it cannot interleave with another placement or a credit.
 */
export async function lockWallet(tx: Tx, businessId: string): Promise<Wallet | null> {
  const [row] = await tx<WalletRow[]>`
    select business_id, balance, currency from wallets where business_id = ${businessId} for update`
  return row ? toWallet(row) : null
}

export interface WalletCredit extends Wallet {
  /** False when the reference had been credited before and nothing changed. */
  credited: boolean
}

/**
 * Credits `amount` kobo and writes its ledger entry in the caller's transaction, so
 * `balance = credits − debits` holds at every commit. A reference already credited to this
 * wallet credits nothing and returns the current balance (the ledger's unique index decides).
 * Null when the business has no wallet.
 */
export async function creditWallet(tx: Tx, businessId: string, amount: number, reference: string | null = null): Promise<WalletCredit | null> {
  const wallet = await lockWallet(tx, businessId)
  if (!wallet) return null
  const inserted = await tx`
    insert into ledger_entries (business_id, kind, amount, reference)
    values (${businessId}, 'credit', ${amount}, ${reference})
    on conflict (business_id, reference) where kind = 'credit' and reference is not null do nothing
    returning id`
  if (inserted.length === 0) return { ...wallet, credited: false }
  const [row] = await tx<WalletRow[]>`
    update wallets set balance = balance + ${amount}, updated_at = now() where business_id = ${businessId}
    returning business_id, balance, currency`
  return { ...toWallet(row), credited: true }
}

/**
 * Debits a placement's total with its ledger entry. Call `lockWallet` first and check the
 * balance; the `balance >= 0` constraint (SQLSTATE 23514) is the last guard, and the ledger's
 * unique index (23505) refuses a second debit for the same placement.
 */
export async function debitWallet(tx: Tx, businessId: string, amount: number, placementId: string): Promise<Wallet> {
  // The ledger refuses zero amounts, and a free placement moves no money anyway.
  if (amount === 0) return (await lockWallet(tx, businessId))!
  await tx`
    insert into ledger_entries (business_id, kind, amount, placement_id)
    values (${businessId}, 'debit', ${amount}, ${placementId})`
  const [row] = await tx<WalletRow[]>`
    update wallets set balance = balance - ${amount}, updated_at = now() where business_id = ${businessId}
    returning business_id, balance, currency`
  return toWallet(row)
}

/**
 * Debits a placement's total with its ledger entry only if the balance covers it: the ledger
 * insert and a conditional update, pipelined in one round trip. Meant to be sent right after
 * `lockWallet` in the same pipeline, as the transaction's last statements, so the wallet's row
 * lock is held for those statements and the commit only. Null when the balance no longer covers
 * the amount: the ledger entry was written, so the caller must roll the transaction back.
 */
export async function debitWalletIfFunded(tx: Tx, businessId: string, amount: number, placementId: string): Promise<Wallet | null> {
  if (amount === 0) return findWallet(tx, businessId)
  const [, rows] = await Promise.all([
    tx`
      insert into ledger_entries (business_id, kind, amount, placement_id)
      values (${businessId}, 'debit', ${amount}, ${placementId})`,
    tx<WalletRow[]>`
      update wallets set balance = balance - ${amount}, updated_at = now()
      where business_id = ${businessId} and balance >= ${amount}
      returning business_id, balance, currency`,
  ])
  return rows[0] ? toWallet(rows[0]) : null
}
