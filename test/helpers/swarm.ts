import { randomBytes } from 'node:crypto'
import type { Sql } from '../../shared/db/sql.js'
import { setBalanceWithEntry } from './db.js'

/** What one client ended with: a final answer (201 or 400), or none before its deadline. */
export interface ClientOutcome {
  key: string
  status: number | null
  body: Record<string, unknown> | null
  attempts: number
  /** Statuses (or 'network') of the attempts that were retried. */
  retried: (number | 'network')[]
  finishedAt: number | null
}

export interface Swarm {
  /** Resolves once every client has a final answer or its deadline passed. */
  done: Promise<ClientOutcome[]>
  /** Attempts answered so far, by status ('network' for a failed connection or timeout). */
  seen: () => Map<number | 'network', number>
  /** Clients with a final answer so far. */
  finished: () => number
}

// Answers a client retries: the outcome is not known yet or the service was not there.
const RETRIED = new Set([409, 429, 500, 502, 503, 504])

/**
 * N clients placing one fixed body at once, each with its own Idempotency-Key, retrying with a
 * small jittered backoff until a final answer (201 or 400) or the deadline, as a careful client
 * of the API does.
 */
export function startSwarm(options: { baseUrl: string; apiKey: string; body: unknown; clients: number; deadlineMs: number; requestTimeoutMs?: number }): Swarm {
  const seen = new Map<number | 'network', number>()
  let finished = 0
  const deadline = Date.now() + options.deadlineMs
  const run = async (index: number): Promise<ClientOutcome> => {
    const outcome: ClientOutcome = { key: `swarm-${index}-${randomBytes(4).toString('hex')}`, status: null, body: null, attempts: 0, retried: [], finishedAt: null }
    while (Date.now() < deadline) {
      outcome.attempts++
      let status: number | 'network'
      let body: Record<string, unknown> | null = null
      try {
        const response = await fetch(`${options.baseUrl}/business/order`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json', 'idempotency-key': outcome.key },
          body: JSON.stringify(options.body),
          signal: AbortSignal.timeout(Math.min(options.requestTimeoutMs ?? 15000, Math.max(1, deadline - Date.now()))),
        })
        status = response.status
        body = (await response.json().catch(() => null)) as Record<string, unknown> | null
      } catch {
        status = 'network'
      }
      seen.set(status, (seen.get(status) ?? 0) + 1)
      if (status !== 'network' && !RETRIED.has(status)) {
        Object.assign(outcome, { status, body, finishedAt: Date.now() })
        finished++
        return outcome
      }
      outcome.retried.push(status)
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300))
    }
    return outcome
  }
  const done = Promise.all(Array.from({ length: options.clients }, (_, index) => run(index)))
  return { done, seen: () => seen, finished: () => finished }
}

/**
 * Sets the demo wallet so it covers exactly `covers` placements of `priceKobo` each (and half of
 * one more), with a debit ledger entry for the difference so balance = credits − debits holds.
 */
export async function fundFor(sql: Sql, businessId: string, priceKobo: number, covers: number): Promise<number> {
  const target = covers * priceKobo + Math.floor(priceKobo / 2)
  await sql.begin(async (tx) => {
    // The live wallet: the demo business has a test wallet too.
    const [wallet] = await tx`select balance from wallets where business_id = ${businessId} and livemode for update`
    const difference = Number(wallet!.balance) - target
    if (difference <= 0) throw new Error(`the wallet holds ${String(wallet!.balance)} kobo, less than ${target}`)
    await setBalanceWithEntry(tx, businessId, { kind: 'debit', amount: difference, reference: 'fault-test:set-balance', balanceAfter: target })
  })
  return target
}
