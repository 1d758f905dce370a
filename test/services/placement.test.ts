import { randomUUID } from 'node:crypto'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import t from 'tap'
import { settleOrphans } from '../../services/placement-worker/sweeps.js'
import { PLACEMENT_QUEUE } from '../../shared/placement-queue.js'
import { releaseExpiredKeys } from '../../shared/db/placements.js'
import { drainInBatches } from '../../shared/drain.js'
import { seedAccount } from '../helpers/accounts.js'
import { setBalanceWithEntry, walletsAgainstLedger } from '../helpers/db.js'
import { IKEJA, ISLAND, shipment } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'

t.test('placement', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db

  const place = (apiKey: string, body: unknown, headers: Record<string, string> = {}) =>
    gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(apiKey), ...headers }, payload: body as never })
  const quote = async (apiKey: string, fields: Record<string, unknown>) => {
    const response = await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(apiKey), payload: fields })
    t.equal(response.statusCode, 200, `quote answers 200: ${response.body}`)
    return response.json().price as number
  }
  const balanceOf = async (businessId: string) => (await sql`select balance from wallets where business_id = ${businessId}`)[0].balance as number
  const counts = async () => (await sql`select (select count(*) from orders)::int as orders, (select count(*) from ledger_entries)::int as ledger, (select count(*) from placements)::int as placements`)[0]

  t.test('one shipment: 201, one order, the quoted price debited', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const expected = await quote(account.apiKey, { pickup_address: 'Broad Street, Lagos Island', dropoff_address: 'Allen Avenue, Ikeja', weight: 2, vehicle_type: 'bike', pickup_latitude: ISLAND.lat, pickup_longitude: ISLAND.lng, dropoff_latitude: IKEJA.lat, dropoff_longitude: IKEJA.lng })
    const response = await place(account.apiKey, [shipment()])
    t.equal(response.statusCode, 201, response.statusCode === 201 ? "201 Created" : response.body)
    const body = response.json()
    t.equal(body.status, 'Success')
    t.equal(body.currency, 'NGN')
    t.equal(body.description, '1 order placed')
    t.equal(body.charged_total, expected)
    t.equal(body.orders.length, 1)
    t.match(body.orders[0].order_id, /^ORD-[0-9A-HJKMNP-TV-Z]{10}$/)
    t.equal(body.orders[0].price, expected)
    t.equal(await balanceOf(account.businessId), (100000 - expected) * 100)
    const [stored] = await sql`select * from orders where id = ${body.orders[0].order_id}`
    t.equal(stored.businessId, account.businessId)
    t.equal(stored.shipment.recipient_name, 'Chidi Okafor')
  })

  t.test('four mixed shipments, each priced as its own quote, in request order', async (t) => {
    const account = await seedAccount(sql, { balance: 500000 })
    const truck = account.options['5-tonne truck']
    const van = account.options['Mini van']
    const batch = [
      shipment({ weight: 3, quantity: 2 }),
      shipment({ vehicle_type: 'truck', option_id: truck, weight: 100, quantity: 12 }),
      shipment({ vehicle_type: undefined, weight: 4, quantity: 3 }),
      shipment({ vehicle_type: 'bus_van', option_id: van, weight: 50, quantity: 1, pickup_latitude: undefined, pickup_longitude: undefined }),
    ]
    const coordinates = { pickup_latitude: ISLAND.lat, pickup_longitude: ISLAND.lng, dropoff_latitude: IKEJA.lat, dropoff_longitude: IKEJA.lng }
    const expected = [
      await quote(account.apiKey, { pickup_address: 'Lagos Island', dropoff_address: 'Ikeja', ...coordinates, vehicle_type: 'bike', weight: 6 }),
      await quote(account.apiKey, { pickup_address: 'Lagos Island', dropoff_address: 'Ikeja', ...coordinates, vehicle_type: 'truck', option_id: truck, weight: 1200 }),
      await quote(account.apiKey, { pickup_address: 'Lagos Island', dropoff_address: 'Ikeja', ...coordinates, weight: 12 }),
      // No pickup of its own: it leaves from the business's pinned point in Lekki.
      await quote(account.apiKey, { pickup_address: '12 Admiralty Way, Lekki', dropoff_address: 'Ikeja', pickup_latitude: 6.4433, pickup_longitude: 3.4723, dropoff_latitude: IKEJA.lat, dropoff_longitude: IKEJA.lng, vehicle_type: 'bus_van', option_id: van, weight: 50 }),
    ]
    const response = await place(account.apiKey, batch)
    t.equal(response.statusCode, 201, response.statusCode === 201 ? "201 Created" : response.body)
    const body = response.json()
    t.same(body.orders.map((order: { price: number }) => order.price), expected)
    const total = expected.reduce((sum, price) => sum + price, 0)
    t.equal(body.charged_total, total)
    t.equal(body.description, '4 orders placed')
    const stored = await sql`select id, position from orders where placement_id = ${body.placement_id} order by position`
    t.same(stored.map((row) => row.id), body.orders.map((order: { order_id: string }) => order.order_id))
    t.equal(await balanceOf(account.businessId), (500000 - total) * 100)
  })

  t.test('a hundred shipments in one placement', async (t) => {
    const account = await seedAccount(sql, { balance: 1000000 })
    const response = await place(account.apiKey, Array.from({ length: 100 }, (_, i) => shipment({ recipient_name: `Recipient ${i}` })))
    t.equal(response.statusCode, 201, response.statusCode === 201 ? "201 Created" : response.body)
    const body = response.json()
    t.equal(body.orders.length, 100)
    t.equal(new Set(body.orders.map((order: { order_id: string }) => order.order_id)).size, 100)
    t.equal(body.charged_total, body.orders.reduce((sum: number, order: { price: number }) => sum + order.price, 0))
    t.equal(await balanceOf(account.businessId), Math.round((1000000 - body.charged_total) * 100))
  })

  t.test('insufficient balance: 400, nothing written, wallet unchanged', async (t) => {
    const account = await seedAccount(sql, { balance: 1000 })
    const before = await counts()
    const response = await place(account.apiKey, [shipment()])
    t.equal(response.statusCode, 400)
    const body = response.json()
    t.equal(body.message, 'Insufficient wallet balance')
    t.equal(body.statusCode, 400)
    t.equal(body.path, '/v2/business/order')
    t.ok(Number.isFinite(Date.parse(body.timestamp)))
    t.equal(body.available, 1000)
    t.ok(body.required > 1000)
    t.equal(body.currency, 'NGN')
    t.match(body.placement_id, /^[0-9a-f-]{36}$/, 'a refusal carries its placement id too')
    t.equal(await balanceOf(account.businessId), 100000)
    const after = await counts()
    t.equal(after.orders, before.orders)
    t.equal(after.ledger, before.ledger)
  })

  t.test('one shipment that cannot be priced fails the whole batch', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const before = await counts()
    const response = await place(account.apiKey, [shipment(), shipment({ dropoff_latitude: 9.07, dropoff_longitude: 7.49 }), shipment({ vehicle_type: 'truck', option_id: 'opt_STALE0000000' })])
    t.equal(response.statusCode, 400)
    const body = response.json()
    t.equal(body.message, 'One or more orders could not be placed')
    t.match(body.placement_id, /^[0-9a-f-]{36}$/)
    t.same(body.errors, [
      { index: 1, message: 'dropoff point is outside the service zones of your rate card' },
      { index: 2, message: '[2].option_id opt_STALE0000000 is not in your rate card for truck; read GET /business/rate-cards again' },
    ])
    t.equal(await balanceOf(account.businessId), 10000000)
    t.equal((await counts()).orders, before.orders)
  })

  t.test('validation: exact messages, nothing stored', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const before = await counts()
    const cases: [unknown, string][] = [
      [[], 'body must be an array of 1 to 100 shipments'],
      [Array.from({ length: 101 }, () => shipment()), 'body must be an array of 1 to 100 shipments'],
      [shipment(), 'body must be an array of 1 to 100 shipments'],
      [[shipment({ weight: 101 })], '[0].weight must not be greater than 100'],
      [[shipment(), shipment(), shipment(), shipment({ weight: 0.05 })], '[3].weight must not be less than 0.1'],
      [[shipment({ quantity: 0 })], '[0].quantity must not be less than 1'],
      [[shipment({ quantity: 1.5 })], '[0].quantity must be an integer number'],
      [[shipment({ dropoff_address: 'abcd' })], '[0].dropoff_address must be longer than or equal to 5 characters'],
      [[shipment({ recipient_name: undefined })], '[0].recipient_name should not be empty'],
      [[shipment({ recipient_name: 42 })], '[0].recipient_name must be a string'],
      [[shipment({ weight: '2' })], '[0].weight must be a number'],
      [[shipment({ vehicle_type: 'car' })], '[0].vehicle_type must be one of the following values: bike, bus_van, truck'],
      [[shipment({ item_description: 'x'.repeat(501) })], '[0].item_description must be shorter than or equal to 500 characters'],
      [[shipment({ option_id: 'opt_X' })], '[0].option_id must be omitted for bike; the band is chosen by weight'],
      [[shipment({ vehicle_type: 'truck' })], '[0].option_id is required when vehicle_type is truck'],
      [[shipment({ vehicle_type: 'truck', option_id: '' })], '[0].option_id should not be empty'],
      [[shipment({ dropoff_longitude: undefined })], '[0].dropoff_longitude is required when dropoff_latitude is sent'],
      [[shipment({ pickup_latitude: 91 })], '[0].pickup_latitude must not be greater than 90'],
      [[shipment({ is_fragile: 'yes' })], '[0].is_fragile must be a boolean value'],
      [[shipment({ recipient_email: 'not-an-email' })], '[0].recipient_email must be an email'],
      // JSON can say what PostgreSQL's text cannot hold: each was a 500 before the placement was stored.
      [[shipment({ pickup_address: 'Victoria Island\u0000, Lagos' })], '[0].pickup_address must not contain a NUL character or an unpaired surrogate'],
      [[shipment(), shipment({ recipient_name: 'Chidi \ud83d' })], '[1].recipient_name must not contain a NUL character or an unpaired surrogate'],
      [[shipment({ item_description: '\udc00 gate' })], '[0].item_description must not contain a NUL character or an unpaired surrogate'],
    ]
    for (const [body, message] of cases) {
      const response = await place(account.apiKey, body)
      t.equal(response.statusCode, 400, message)
      t.equal(response.json().message, message)
      t.equal(response.json().path, '/v2/business/order')
    }
    const multiple = (await place(account.apiKey, [shipment({ weight: 101, quantity: 0 })])).json()
    t.same(multiple.errors.map((error: { index: number; field: string }) => [error.index, error.field]), [[0, 'weight'], [0, 'quantity']])
    t.same(await counts(), before)
    t.equal(await balanceOf(account.businessId), 10000000)
  })

  t.test('unknown fields are accepted and never stored; a null takes the default', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const response = await place(account.apiKey, [shipment({ sender_name: null, coupon: 'FREE', is_fragile: true })])
    t.equal(response.statusCode, 201, response.statusCode === 201 ? "201 Created" : response.body)
    const [stored] = await sql`select shipment from orders where id = ${response.json().orders[0].order_id}`
    t.notOk('coupon' in stored.shipment)
    t.equal(stored.shipment.sender_name, 'Ada Stores', 'sender_name sent as null is the business name, as if omitted')
    t.equal(stored.shipment.sender_phone, '+2348010000000', 'sender_phone omitted is the business phone')
    t.equal(stored.shipment.is_fragile, true)
    t.equal(stored.shipment.pickup_state, 'Lagos', 'pickup_state omitted is the business state')
    t.equal(stored.shipment.pickup_address, '12 Admiralty Way, Lekki', 'and pickup_address the business address')

    // The spec's default holds with a pickup address of the shipment's own too: the state is the business's unless sent.
    const own = await place(account.apiKey, [shipment({ pickup_address: 'Broad Street, Lagos Island' })])
    t.equal(own.statusCode, 201, own.body)
    const [ownStored] = await sql`select shipment from orders where id = ${own.json().orders[0].order_id}`
    t.same([ownStored.shipment.pickup_address, ownStored.shipment.pickup_state], ['Broad Street, Lagos Island', 'Lagos'])
    const sentState = await place(account.apiKey, [shipment({ pickup_address: 'Wuse 2, Abuja', pickup_state: 'FCT' })])
    t.equal(sentState.statusCode, 201, sentState.body)
    const [sentStored] = await sql`select shipment from orders where id = ${sentState.json().orders[0].order_id}`
    t.equal(sentStored.shipment.pickup_state, 'FCT', 'a pickup_state sent is kept')
  })

  t.test('twenty concurrent placements on a wallet that covers exactly five', async (t) => {
    const probe = await seedAccount(sql, { balance: 100000 })
    const price = (await place(probe.apiKey, [shipment()])).json().charged_total as number
    const account = await seedAccount(sql, { balance: price * 5 })
    const responses = await Promise.all(Array.from({ length: 20 }, () => place(account.apiKey, [shipment()])))
    const codes = responses.map((response) => response.statusCode)
    t.equal(codes.filter((code) => code === 201).length, 5)
    t.equal(codes.filter((code) => code === 400).length, 15)
    t.ok(responses.filter((response) => response.statusCode === 400).every((response) => response.json().message === 'Insufficient wallet balance'))
    t.equal(await balanceOf(account.businessId), 0)
    const [{ count }] = await sql`select count(*)::int from orders where business_id = ${account.businessId}`
    t.equal(count, 5)
  })

  t.test('Idempotency-Key: replay, a different body, per business', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const other = await seedAccount(sql, { balance: 100000 })
    const key = { 'idempotency-key': 'order-7781' }
    const first = await place(account.apiKey, [shipment()], key)
    t.equal(first.statusCode, 201)
    const replay = await place(account.apiKey, [shipment()], key)
    t.equal(replay.statusCode, 201)
    t.same(replay.json(), first.json())
    t.equal(replay.headers['idempotent-replayed'], 'true')
    const [{ count }] = await sql`select count(*)::int from ledger_entries where business_id = ${account.businessId} and kind = 'debit'`
    t.equal(count, 1, 'debited once')

    const changed = await place(account.apiKey, [shipment({ weight: 3 })], key)
    t.equal(changed.statusCode, 422)
    t.equal(changed.json().message, 'Idempotency-Key was already used with a different request body')
    t.equal(changed.json().placement_id, first.json().placement_id, 'names the placement the key belongs to')

    const otherBusiness = await place(other.apiKey, [shipment()], key)
    t.equal(otherBusiness.statusCode, 201)
    t.not(otherBusiness.json().placement_id, first.json().placement_id)

    const tooLong = await place(account.apiKey, [shipment()], { 'idempotency-key': 'k'.repeat(256) })
    t.equal(tooLong.statusCode, 400)
    t.equal(tooLong.json().message, 'Idempotency-Key must be shorter than or equal to 255 characters')

    // A stored 400 replays too, and never debits later.
    const poor = await seedAccount(sql, { balance: 10 })
    const refused = await place(poor.apiKey, [shipment()], key)
    t.equal(refused.statusCode, 400)
    await sql.begin((tx) => setBalanceWithEntry(tx, poor.businessId, { kind: 'credit', amount: 100000000 - 1000, reference: 'top-up', balanceAfter: 100000000 }))
    const again = await place(poor.apiKey, [shipment()], key)
    t.equal(again.statusCode, 400)
    t.equal(again.json().message, 'Insufficient wallet balance')
  })

  t.test('an Idempotency-Key lives 24 hours; then it places anew, and the sweep frees old keys', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const key = { 'idempotency-key': 'yesterday' }
    const first = (await place(account.apiKey, [shipment()], key)).json()
    await sql`update placements set created_at = now() - interval '25 hours' where id = ${first.placement_id}`
    const again = await place(account.apiKey, [shipment()], key)
    t.equal(again.statusCode, 201)
    t.not(again.json().placement_id, first.placement_id, 'a new placement, not a replay')
    const [{ count }] = await sql`select count(*)::int from ledger_entries where business_id = ${account.businessId} and kind = 'debit'`
    t.equal(count, 2)

    await sql`update placements set created_at = now() - interval '25 hours' where id = ${again.json().placement_id}`
    t.ok(await releaseExpiredKeys(sql, 24, 1000) >= 1)
    const [row] = await sql`select idempotency_key from placements where id = ${again.json().placement_id}`
    t.equal(row.idempotencyKey, null, 'the sweep released the key')
  })

  t.test('the key sweep frees a backlog a batch a statement', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const ids = []
    for (const key of ['old-1', 'old-2', 'old-3']) ids.push((await place(account.apiKey, [shipment()], { 'idempotency-key': key })).json().placement_id)
    await sql`update placements set created_at = now() - interval '25 hours' where id = any(${ids}::uuid[])`
    t.equal(await releaseExpiredKeys(sql, 24, 2), 2, 'one statement frees no more than its batch')
    t.ok(await drainInBatches(2, (limit) => releaseExpiredKeys(sql, 24, limit)) >= 1, 'the rest in the batches after')
    const left = await sql`select id from placements where id = any(${ids}::uuid[]) and idempotency_key is not null`
    t.same(left, [], 'every expired key is free')
  })

  t.test('the settler settles a pending placement that no job backs as not processed, freeing its key', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const connection = new Redis(db.config.REDIS_URL, { maxRetriesPerRequest: null })
    const queue = new Queue(PLACEMENT_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
    t.teardown(async () => { await queue.close(); connection.disconnect() })
    // 30 s old: past this call's 10 s, and short of the 45 s after which this file's own worker
    // settles orphans every 2 s, so no settler but this call can get to it first.
    const orphan = randomUUID()
    await sql`insert into placements (id, business_id, status, idempotency_key, request_hash, shipments, created_at)
              values (${orphan}, ${account.businessId}, 'pending', 'crashed-gateway', 'x', '[]', now() - interval '30 seconds')`
    const recent = randomUUID()
    await sql`insert into placements (id, business_id, status, request_hash, shipments) values (${recent}, ${account.businessId}, 'pending', 'x', '[]')`
    t.same(await settleOrphans(sql, queue, 10), [orphan], 'only the old orphan is settled')
    const rows = await sql`select id, status, outcome, idempotency_key from placements where id in (${orphan}, ${recent}) order by created_at`
    t.same(rows.map((row) => [row.id, row.status, row.outcome, row.idempotencyKey]), [[orphan, 'failed', { kind: 'not_processed' }, null], [recent, 'pending', null, null]])
    const retry = await place(account.apiKey, [shipment()], { 'idempotency-key': 'crashed-gateway' })
    t.equal(retry.statusCode, 201, 'its key places anew')
    await sql`delete from placements where id = ${recent}`
  })

  t.test('the settler pages past pending placements whose jobs still wait, to an orphan behind them', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const connection = new Redis(db.config.REDIS_URL, { maxRetriesPerRequest: null })
    const queue = new Queue(PLACEMENT_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
    t.teardown(async () => { await queue.close(); connection.disconnect() })
    // A backlog: older placements whose jobs wait (delayed an hour, so no worker takes them), then
    // a newer one no job backs. Ages as in the test above: only this call's settler sees them.
    const waiting = [randomUUID(), randomUUID(), randomUUID()]
    for (const [i, id] of waiting.entries()) {
      await sql`insert into placements (id, business_id, status, request_hash, shipments, created_at)
                values (${id}, ${account.businessId}, 'pending', 'x', '[]', now() - make_interval(secs => ${40 - i}))`
      await queue.add('place', { placement_id: id, business_id: account.businessId }, { jobId: id, delay: 3_600_000 })
    }
    const orphan = randomUUID()
    await sql`insert into placements (id, business_id, status, request_hash, shipments, created_at)
              values (${orphan}, ${account.businessId}, 'pending', 'x', '[]', now() - interval '30 seconds')`
    t.same(await settleOrphans(sql, queue, 10, 2), [orphan], 'two pages of two: the orphan after the three waiting is settled')
    const statuses = await sql`select status from placements where id = any(${waiting}::uuid[])`
    t.same(statuses.map((row) => row.status), ['pending', 'pending', 'pending'], 'the waiting ones are left to their jobs')
    for (const id of waiting) await queue.remove(id)
    await sql`delete from placements where id = any(${waiting}::uuid[])`
  })

  t.test('reading a placement: stored answer, 404 for unknown or foreign ids', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    const other = await seedAccount(sql, { balance: 100000 })
    const placed = (await place(account.apiKey, [shipment()])).json()
    const read = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placed.placement_id}`, headers: bearer(account.apiKey) })
    t.equal(read.statusCode, 201)
    t.same(read.json(), placed)
    const foreign = await gateway.inject({ method: 'GET', url: `/v2/business/placements/${placed.placement_id}`, headers: bearer(other.apiKey) })
    t.equal(foreign.statusCode, 404)
    const unknown = await gateway.inject({ method: 'GET', url: '/v2/business/placements/not-a-uuid', headers: bearer(account.apiKey) })
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.json().path, '/v2/business/placements/not-a-uuid')
  })

  t.test('every wallet still equals its ledger, and none is negative', async (t) => {
    for (const wallet of await walletsAgainstLedger(sql)) {
      t.equal(wallet.balance, wallet.ledger, `wallet ${wallet.businessId}`)
      t.ok(wallet.balance >= 0)
    }
  })
})
