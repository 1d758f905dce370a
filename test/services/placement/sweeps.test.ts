import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import t from 'tap'
import { erasePersonalDataOlderThan } from '../../../shared/orders/personal-data.js'
import { PLACEMENT_QUEUE, type PlacementJob } from '../../../shared/placement-queue.js'
import { seedAccount } from '../../helpers/accounts.js'
import { holdLock } from '../../helpers/db.js'
import { waitFor } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { usePhotoStore } from '../../helpers/photos.js'

t.test('the worker sweeps: orphans settled not processed, late jobs inert, personal data erased', async (t) => {
  const { gateway, db } = await startStack(t, { env: { PLACEMENT_ORPHAN_AFTER_S: '1' } })
  const { sql } = db
  const connection = new Redis(db.config.REDIS_URL, { maxRetriesPerRequest: null })
  const queue = new Queue<PlacementJob>(PLACEMENT_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
  t.teardown(async () => { await queue.close(); connection.disconnect() })
  const place = (apiKey: string, key: string) =>
    gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(apiKey), 'idempotency-key': key }, payload: [shipment()] })
  const debits = async (businessId: string) => (await sql`select count(*)::int as n from ledger_entries where business_id = ${businessId} and kind = 'debit'`)[0].n

  t.test('a pending placement no job backs is settled not_processed within 10 s; its key places anew; a late job moves no money', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const orphan = randomUUID()
    // As a gateway that died between recording the placement and queueing its job leaves it.
    await sql`insert into placements (id, business_id, status, idempotency_key, request_hash, shipments)
              values (${orphan}, ${account.businessId}, 'pending', 'gateway-died', 'x', ${JSON.stringify([shipment()])}::text::jsonb)`
    // Read as pending while the test holds the row, so the settler (every 2 s) cannot get there first.
    const held = await holdLock(sql, (tx) => tx`select id from placements where id = ${orphan} for update`)
    const pendingRead = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${orphan}`, headers: bearer(account.apiKey) })
    await held.release()
    t.equal(pendingRead.statusCode, 202)

    t.ok(await waitFor(async () => (await sql`select status from placements where id = ${orphan}`)[0].status !== 'pending', 10000), 'settled within 10 s')
    const [row] = await sql`select status, outcome, idempotency_key from placements where id = ${orphan}`
    t.same(row, { status: 'failed', outcome: { kind: 'not_processed' }, idempotencyKey: null })

    const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${orphan}`, headers: bearer(account.apiKey) })
    t.equal(read.statusCode, 503)
    t.equal(read.json().message, 'Placement was not processed; nothing was charged')
    t.equal(read.json().placement_id, orphan)
    t.equal(read.json().path, `/v2/business/placements/${orphan}`)

    const retry = await place(account.apiKey, 'gateway-died')
    t.equal(retry.statusCode, 201, 'the freed key places afresh')
    t.not(retry.json().placement_id, orphan)

    // Its job turns up after all (Redis handed it out late): the worker finds the row settled.
    await queue.add('place', { placement_id: orphan, business_id: account.businessId }, { jobId: orphan, removeOnComplete: false })
    t.ok(await waitFor(async () => (await queue.getJob(orphan))?.finishedOn !== undefined, 10000), 'the late job ran')
    t.equal(await debits(account.businessId), 1, 'only the retry was charged')
    const [{ n }] = await sql`select count(*)::int as n from orders where placement_id = ${orphan}`
    t.equal(n, 0, 'the late job placed nothing')
  })

  t.test('a job for another business\'s placement does nothing', async (t) => {
    const owner = await seedAccount(sql, { balance: 100000 })
    const intruder = await seedAccount(sql, { balance: 100000 })
    const id = randomUUID()
    await sql`insert into placements (id, business_id, status, request_hash, shipments)
              values (${id}, ${owner.businessId}, 'pending', 'x', ${JSON.stringify([shipment()])}::text::jsonb)`
    await queue.add('place', { placement_id: id, business_id: intruder.businessId }, { jobId: id, removeOnComplete: false })
    t.ok(await waitFor(async () => (await queue.getJob(id))?.finishedOn !== undefined, 10000))
    t.equal(await debits(owner.businessId) + await debits(intruder.businessId), 0, 'no money moved')
    // Its job finished without settling it: the settler does, so it is not pending forever.
    t.ok(await waitFor(async () => (await sql`select status from placements where id = ${id}`)[0].status === 'failed', 10000), 'settled not processed')
  })

  t.test('personal fields are erased after the retention; the outcome stays', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const placed = await place(account.apiKey, 'erase-me')
    t.equal(placed.statusCode, 201)
    const id = placed.json().placement_id
    const fresh = (await place(account.apiKey, 'keep-me')).json().placement_id
    await sql`update placements set created_at = now() - interval '91 days' where id = ${id}`

    t.ok(await erasePersonalDataOlderThan(sql, usePhotoStore(t).store, 90) >= 1)
    const personal = ['recipient_name', 'recipient_phone', 'dropoff_address']
    const [stored] = await sql`select shipments, personal_data_erased_at from placements where id = ${id}`
    t.ok(stored.personalDataErasedAt)
    for (const field of personal) t.notOk(field in stored.shipments[0], `placement row: ${field} erased`)
    t.equal(stored.shipments[0].item_name, 'Phone case', 'what is not personal stays')
    const [order] = await sql`select shipment from orders where placement_id = ${id}`
    for (const field of personal) t.notOk(field in order.shipment, `order: ${field} erased`)
    const [kept] = await sql`select shipments from placements where id = ${fresh}`
    t.equal(kept.shipments[0].recipient_name, 'Chidi Okafor', 'a recent placement keeps its data')

    const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${id}`, headers: bearer(account.apiKey) })
    t.same(read.json(), placed.json(), 'the stored answer is unchanged')
  })
})
