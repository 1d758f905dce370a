import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Sql } from '../../../shared/db/sql.js'
import { findWalletView, listLedger, type LedgerEntry } from '../../../shared/db/wallets.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { transactionId } from '../../../shared/ids.js'
import { toMajor } from '../../../shared/money.js'
import { decodeCursor, enumListParam, keysetPage, limitParam, readQuery } from '../query.js'

const ENTRY_TYPES = ['credit', 'debit', 'refund'] as const
const entryCursor = z.object({ seq: z.number().int().positive() }).strict()

interface WalletRouteOptions {
  sql: Sql
  /** The statement's pool: a replica when one is configured; the balance is read on `sql`, the primary. */
  reads: Sql
}

/** The wallet a business pays from and its statement (docs/contracts.md section 6). */
export default async function walletRoutes(app: FastifyInstance, { sql, reads }: WalletRouteOptions) {
  app.get('/business/wallet', async (request) => {
    const wallet = await findWalletView(sql, request.caller.businessId, request.caller.livemode)
    if (!wallet) throw new ApiError(404, 'This business has no wallet')
    return { balance: toMajor(wallet.balance), currency: wallet.currency, livemode: wallet.livemode, updated_at: wallet.updatedAt.toISOString() }
  })

  app.get('/business/wallet/transactions', async (request) => {
    const query = readQuery(request.query, ['type', 'limit', 'cursor'])
    const kinds = enumListParam('type', query.type, ENTRY_TYPES)
    const limit = limitParam(query.limit)
    const cursor = decodeCursor(query.cursor, entryCursor)
    const rows = await listLedger(reads, request.caller.businessId, { kinds, beforeSeq: cursor?.seq ?? null, limit: limit + 1 }, request.caller.livemode)
    return keysetPage(rows, limit, toTransaction, (entry) => ({ seq: entry.seq }))
  })
}

function toTransaction(entry: LedgerEntry) {
  return {
    id: transactionId(entry.ledgerName, entry.seq),
    type: entry.kind,
    amount: toMajor(entry.amount),
    balance_after: toMajor(entry.balanceAfter),
    reference: entry.reference,
    placement_id: entry.placementId,
    order_id: entry.orderId,
    created_at: entry.createdAt.toISOString(),
  }
}
