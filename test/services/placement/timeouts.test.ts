import t from 'tap'
import { withDeadline } from '../../../shared/deadline.js'
import { seedAccount } from '../../helpers/accounts.js'
import { holdLock } from '../../helpers/db.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

t.test('bounded Postgres waits: a held lock gives a final answer, never a hang or a 500', async (t) => {
  // The test's own pool has no bounds; the services' pools give up on a lock after 300 ms.
  const { gateway, db } = await startStack(t, { env: { PG_LOCK_TIMEOUT_MS: '300' } })
  const { sql } = db
  const place = (apiKey: string) => gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(apiKey), payload: [shipment()] })

  t.test('the worker cannot lock the wallet: the placement ends not processed, nothing charged', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const { release } = await holdLock(sql, (tx) => tx`select balance from wallets where business_id = ${account.businessId} for update`)
    t.teardown(release)
    // Each attempt gives up on the lock; once the retries are spent the row is settled.
    const answer = await withDeadline(place(account.apiKey), 25000)
    t.equal(answer.statusCode, 503)
    t.equal(answer.json().message, 'Placement was not processed; nothing was charged')
    t.match(answer.json().placement_id, /^[0-9a-f-]{36}$/)
    const [{ n }] = await sql`select count(*)::int as n from ledger_entries where business_id = ${account.businessId} and kind = 'debit'`
    t.equal(n, 0)
  })

  t.test('the gateway cannot write the placement row: 503, not a 500 and not a hang', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const { release } = await holdLock(sql, (tx) => tx`lock table placements in access exclusive mode`)
    t.teardown(release)
    const answer = await withDeadline(place(account.apiKey), 10000)
    t.equal(answer.statusCode, 503)
    // Every 503 of a placement carries its id (DESIGN 7), this one too: the row may not exist.
    const placementId = answer.json().placement_id
    t.match(placementId, /^[0-9a-f-]{36}$/)
    t.equal(answer.json().message, `Placement could not be recorded; nothing was charged; retry with the same Idempotency-Key or read GET /v2/business/placements/${placementId}`)
    t.equal(answer.json().path, '/v2/business/order')
    await release()
    const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placementId}`, headers: bearer(account.apiKey) })
    t.equal(read.statusCode, 404, 'the insert never committed: the id names no placement')
  })

  t.test("an expired Idempotency-Key whose earlier placement is locked: the key's release times out, a 503 naming the placement", async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const first = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), 'idempotency-key': 'expired-key' }, payload: [shipment()] })
    t.equal(first.statusCode, 201)
    const earlierId = first.json().placement_id
    // Past IDEMPOTENCY_TTL_H, so a new use of the key releases it from the earlier placement, whose row is held here.
    await sql`update placements set created_at = now() - interval '30 days' where id = ${earlierId}`
    const { release } = await holdLock(sql, (tx) => tx`select id from placements where id = ${earlierId} for update`)
    t.teardown(release)
    const answer = await withDeadline(gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(account.apiKey), 'idempotency-key': 'expired-key' }, payload: [shipment(), shipment()] }), 10000)
    t.equal(answer.statusCode, 503)
    const placementId = answer.json().placement_id
    t.match(placementId, /^[0-9a-f-]{36}$/, 'every 503 of a placement carries its id (DESIGN 7)')
    t.not(placementId, earlierId)
    t.equal(answer.json().message, `Placement could not be recorded; nothing was charged; retry with the same Idempotency-Key or read GET /v2/business/placements/${placementId}`)
    await release()
    const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placementId}`, headers: bearer(account.apiKey) })
    t.equal(read.statusCode, 404, 'nothing was recorded under that id')
    const [{ n }] = await sql`select count(*)::int as n from ledger_entries where business_id = ${account.businessId} and kind = 'debit'`
    t.equal(n, 1, 'only the first placement was charged')
  })
})
