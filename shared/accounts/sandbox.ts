import type { Tx } from '../db/sql.js'
import { createWallet, creditWallet } from '../db/wallets.js'

// The reference of the sandbox's opening credit: the ledger's unique index makes it happen once.
const OPENING_REFERENCE = 'sandbox-opening-balance'

/**
 * Opens a business's sandbox: its test wallet, apart from the live one, credited `startKobo`
 * once (docs/contracts.md section 8). Making a second test key changes nothing.
 */
export async function openSandbox(tx: Tx, business: { id: string; currency: string }, startKobo: number): Promise<void> {
  await createWallet(tx, business.id, business.currency, false)
  if (startKobo > 0) await creditWallet(tx, business.id, startKobo, OPENING_REFERENCE, false)
}
