import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import t from 'tap'
import { placementOutcomeSchema } from '../../../shared/placement/outcome.js'
import { PLACEMENT_QUEUE } from '../../../shared/placement-queue.js'
import { seedAccount } from '../../helpers/accounts.js'
import { holdLock, lockWaiters } from '../../helpers/db.js'
import { waitFor } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

t.test('placement outcomes: stored typed, answered the same by the first answer, a replay and a read', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db
  const place = (apiKey: string, body: unknown, key: string) =>
    gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(apiKey), 'idempotency-key': key }, payload: body as never })
  const read = (apiKey: string, id: string) => gateway.inject({ method: 'GET', url: `/v2/business/placements/${id}`, headers: bearer(apiKey) })
  const storedOutcome = async (id: string) => placementOutcomeSchema.parse((await sql`select outcome from placements where id = ${id}`)[0].outcome)
  // The error body's own fields differ per request; the rest must not.
  const stable = (body: Record<string, unknown>) => {
    const { timestamp, request_id, path, ...rest } = body
    return rest
  }

  t.test('placed: kobo on the row, major units on the wire, placement_id on every answer', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const first = await place(account.apiKey, [shipment(), shipment({ weight: 5 })], 'placed-1')
    t.equal(first.statusCode, 201, first.body)
    const body = first.json()
    const outcome = await storedOutcome(body.placement_id)
    t.equal(outcome.kind, 'placed')
    if (outcome.kind !== 'placed') return
    t.equal(outcome.chargedTotal, Math.round(body.charged_total * 100))
    t.same(outcome.orders.map((order) => [order.orderId, order.price]), body.orders.map((order: { order_id: string; price: number }) => [order.order_id, Math.round(order.price * 100)]))
    const replay = await place(account.apiKey, [shipment(), shipment({ weight: 5 })], 'placed-1')
    t.same(replay.json(), body)
    const got = await read(account.apiKey, body.placement_id)
    t.equal(got.statusCode, 201)
    t.same(got.json(), body)
  })

  t.test('unpriceable: 400 with errors and placement_id, the same on replay and read', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const batch = [shipment(), shipment({ dropoff_latitude: 9.07, dropoff_longitude: 7.49 })]
    const first = await place(account.apiKey, batch, 'unpriceable-1')
    t.equal(first.statusCode, 400)
    const body = first.json()
    t.equal(body.message, 'One or more orders could not be placed')
    t.match(body.placement_id, /^[0-9a-f-]{36}$/)
    t.same(await storedOutcome(body.placement_id), { kind: 'unpriceable', errors: body.errors })
    const replay = await place(account.apiKey, batch, 'unpriceable-1')
    t.equal(replay.statusCode, 400)
    t.same(stable(replay.json()), stable(body))
    const got = await read(account.apiKey, body.placement_id)
    t.equal(got.statusCode, 400)
    t.same(stable(got.json()), stable(body))
  })

  t.test('insufficient_balance: 400 with required, available, currency and placement_id', async (t) => {
    const account = await seedAccount(sql, { balance: 10 })
    const first = await place(account.apiKey, [shipment()], 'poor-1')
    t.equal(first.statusCode, 400)
    const body = first.json()
    t.equal(body.message, 'Insufficient wallet balance')
    t.equal(body.available, 10)
    t.equal(body.currency, 'NGN')
    t.match(body.placement_id, /^[0-9a-f-]{36}$/)
    t.same(await storedOutcome(body.placement_id), { kind: 'insufficient_balance', currency: 'NGN', required: Math.round(body.required * 100), available: 1000 })
    const got = await read(account.apiKey, body.placement_id)
    t.equal(got.statusCode, 400)
    t.same(stable(got.json()), stable(body))
  })

  t.test('a balance spent while a placement ran: its debit fails in Postgres, nothing of it stays, and it answers insufficient_balance', async (t) => {
    const price = (await place((await seedAccount(sql, { balance: 100000 })).apiKey, [shipment()], 'price-of-one')).json().charged_total
    const account = await seedAccount(sql, { balance: price * 1.5 })
    // Both read a balance that covers them, then queue for the wallet (the second behind the
    // first, on the business's event counter), so the second's debit finds it spent.
    const held = await holdLock(sql, (tx) => tx`select balance from wallets where business_id = ${account.businessId} for update`)
    const answers = Promise.all([place(account.apiKey, [shipment()], 'race-1'), place(account.apiKey, [shipment()], 'race-2')])
    t.ok(await waitFor(async () => (await lockWaiters(sql, held.pid)).length === 2, 10000), 'both placements wait for the wallet')
    await held.release()
    const bodies = (await answers).map((answer) => answer.json())
    t.same(bodies.map((body) => body.charged_total ?? body.message).sort(), [price, 'Insufficient wallet balance'].sort())
    t.same(bodies.filter((body) => body.available !== undefined).map((body) => body.available), [price * 0.5], 'the balance after the first')
    const [{ orders, debits }] = await sql`
      select (select count(*)::int from orders where business_id = ${account.businessId}) as orders,
        (select count(*)::int from ledger_entries where business_id = ${account.businessId} and kind = 'debit') as debits`
    t.same({ orders, debits }, { orders: 1, debits: 1 }, 'the refused placement left no order and no debit')
  })

  t.test('the job in Redis holds ids only, and a completed job leaves Redis', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const connection = new Redis(db.config.REDIS_URL, { maxRetriesPerRequest: null })
    const queue = new Queue(PLACEMENT_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
    t.teardown(async () => { await queue.close(); connection.disconnect() })
    // Paused, the queue keeps the job where the test can read it before the worker takes it.
    await queue.pause()
    t.teardown(() => queue.resume())
    const answer = place(account.apiKey, [shipment({ recipient_email: 'chidi@example.com' })], 'ids-only')
    let jobs: { id?: string; data: unknown }[] = []
    t.ok(await waitFor(async () => (jobs = await queue.getJobs(['waiting'])).length === 1, 10000), 'the job is queued')
    const [job] = jobs
    t.same(job.data, { placement_id: job.id, business_id: account.businessId }, 'ids only')
    t.notOk(/Chidi|\+234|example\.com|Allen Avenue/.test(JSON.stringify(job.data)), 'no name, phone, e-mail or address')
    await queue.resume()
    const placed = await answer
    t.equal(placed.statusCode, 201)
    t.equal(placed.json().placement_id, job.id)
    // The answer can come from the gateway's once-a-second read of the row, a moment before
    // BullMQ finishes the job: wait for it to go rather than look once.
    t.ok(await waitFor(async () => (await queue.getJob(job.id ?? '')) === undefined, 10000), 'the completed job is gone from Redis')
    const [{ count }] = await sql`select count(*)::int from placements where id = ${placed.json().placement_id} and shipments->0->>'recipient_email' = 'chidi@example.com'`
    t.equal(count, 1, 'the shipments are on the placement row')
  })
})
