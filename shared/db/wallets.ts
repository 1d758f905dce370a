import { WalletNotCoveredError } from '../errors/wallet-not-covered-error.js'
import type { Db, Tx } from './sql.js'

/** A business wallet, balance in kobo. */
export interface Wallet {
  businessId: string
  balance: number
  currency: string
}

/** Every business has exactly one wallet, created empty with it. */
export async function createWallet(db: Db, businessId: string, currency: string): Promise<Wallet> {
  const [row] = await db<Wallet[]>`
    insert into wallets (business_id, balance, currency) values (${businessId}, 0, ${currency})
    returning business_id, balance, currency`
  return row
}

export async function findWallet(db: Db, businessId: string): Promise<Wallet | null> {
  const [row] = await db<Wallet[]>`select business_id, balance, currency from wallets where business_id = ${businessId}`
  return row ?? null
}

/**
 * Locks the wallet row until the transaction ends, so a balance check and the debit that
 * follows it cannot interleave with another placement or a credit.
 */
export async function lockWallet(tx: Tx, businessId: string): Promise<Wallet | null> {
  const [row] = await tx<Wallet[]>`
    select business_id, balance, currency from wallets where business_id = ${businessId} for update`
  return row ?? null
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
  const [row] = await tx<Wallet[]>`
    update wallets set balance = balance + ${amount}, updated_at = now() where business_id = ${businessId}
    returning business_id, balance, currency`
  return { ...row, credited: true }
}

/**
 * Debits a placement's total with its ledger entry if the balance covers it: the ledger insert
 * and a conditional update, pipelined in one round trip. Meant to follow `lockWallet` in the
 * same pipeline, as the transaction's last statements, so the wallet's row lock is held for
 * them and the commit only. When the balance no longer covers the amount it throws
 * `WalletNotCoveredError`, so the ledger entry already sent can never commit. The ledger's
 * unique index (23505) refuses a second debit for one placement, and `balance >= 0` (23514)
 * stands behind it all.
 */
export async function debitWalletIfCovered(tx: Tx, businessId: string, amount: number, placementId: string): Promise<Wallet> {
  // The ledger refuses zero amounts, and a free placement moves no money anyway.
  if (amount === 0) return (await findWallet(tx, businessId))!
  const [, rows] = await Promise.all([
    tx`
      insert into ledger_entries (business_id, kind, amount, placement_id)
      values (${businessId}, 'debit', ${amount}, ${placementId})`,
    tx<Wallet[]>`
      update wallets set balance = balance - ${amount}, updated_at = now()
      where business_id = ${businessId} and balance >= ${amount}
      returning business_id, balance, currency`,
  ])
  if (!rows[0]) throw new WalletNotCoveredError(`wallet of ${businessId} no longer covers ${amount}`)
  return rows[0]
}
