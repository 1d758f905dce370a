import type { Test } from 'tap'
import type { Sql } from '../../shared/db/sql.js'
import { walletIsBroken, walletsAgainstLedger } from './db.js'
import { waitForValue } from './processes.js'
import type { Receiver } from './webhook-receiver.js'

/*
 * What the scale-out tests (DESIGN 16) end on, whatever fault they made: money moved once per
 * placement, every event delivered at least once, and any repeat a receiver saw is the same
 * event (same `webhook-id`), which Standard Webhooks lets it drop.
 */

/** Each success is its own placement, debited once by its charged total; no placement is left pending; wallets equal their ledgers. */
export async function assertChargedOnce(t: Test, sql: Sql, businessIds: string[], placed: { placementId: string; chargedKobo: number }[]): Promise<void> {
  t.equal(new Set(placed.map((row) => row.placementId)).size, placed.length, 'each success is its own placement')
  const debits = await sql<{ placementId: string; debits: number; amount: number }[]>`
    select placement_id, count(*)::int as debits, sum(amount)::bigint as amount from ledger_entries
    where business_id in ${sql(businessIds)} and kind = 'debit' and placement_id is not null group by placement_id`
  t.same(debits.filter((row) => row.debits > 1), [], 'no placement is debited twice')
  const charged = Object.fromEntries(debits.map((row) => [row.placementId, Number(row.amount)]))
  t.same(charged, Object.fromEntries(placed.map((row) => [row.placementId, row.chargedKobo])), 'debited are exactly the successes, each by its charged total')
  const [pending] = await sql<{ count: number }[]>`select count(*)::int as count from placements where business_id in ${sql(businessIds)} and status = 'pending'`
  t.equal(pending!.count, 0, 'no placement is left pending')
  const [created] = await sql<{ orders: number; events: number }[]>`
    select (select count(*)::int from orders where business_id in ${sql(businessIds)}) as orders,
           (select count(*)::int from events where business_id in ${sql(businessIds)} and type = 'order.created') as events`
  t.equal(created!.orders, created!.events, 'one order.created event per order')
  const broken = (await walletsAgainstLedger(sql)).filter(walletIsBroken)
  t.same(broken, [], 'every wallet = credits − debits + refunds, entries numbered 1 … n')
}

/**
 * Waits until the receiver has answered 204 to every event of these businesses (at least once),
 * then checks it received no delivery that is not one of those events.
 */
export async function assertEveryEventDelivered(t: Test, sql: Sql, receiver: Receiver, businessIds: string[], timeoutMs: number): Promise<void> {
  const eventIds = async () => (await sql<{ id: string }[]>`select id from events where business_id in ${sql(businessIds)} and livemode`).map((row) => row.id)
  const delivered = () => new Set(receiver.receipts.filter((receipt) => receipt.answered === 204).map((receipt) => receipt.id))
  const waited = await waitForValue(eventIds, (ids) => { const got = delivered(); return ids.length > 0 && ids.every((id) => got.has(id)) }, timeoutMs, 250)
  const got = delivered()
  const missing = waited.value.filter((id) => !got.has(id))
  t.same(missing.slice(0, 5), [], `every event is delivered at least once (${waited.value.length} events, ${missing.length} missing)`)
  const known = new Set(waited.value)
  t.same(receiver.receipts.filter((receipt) => !known.has(receipt.id)).map((receipt) => receipt.id).slice(0, 5), [], 'every delivery is one of those events')
  t.ok(receiver.receipts.every((receipt) => receipt.verified), 'every delivery verifies')
  const repeats = receiver.receipts.length - new Set(receiver.receipts.map((receipt) => receipt.id)).size
  t.comment(`${receiver.receipts.length} deliveries of ${known.size} events: ${repeats} repeats, each with the webhook-id of an event already received`)
}
