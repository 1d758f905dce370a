import { Redis } from 'ioredis'
import t from 'tap'
import { importRateCard } from '../../../shared/pricing/rate-card-file.js'
import { demoCardFile, seedAccount } from '../../helpers/accounts.js'
import { waitFor, startOwnRedis } from '../../helpers/processes.js'
import { IKEJA, ISLAND, shipment } from '../../helpers/shipments.js'
import { PLACE, QUOTE, quoteBody } from '../../helpers/gateway.js'
import { bearer, startStack } from '../../helpers/stack.js'

const QUOTE_ID = /^qt_[0-9A-HJKMNP-TV-Z]{16}$/

t.test('quotes that hold their price', async (t) => {
  const redis = await startOwnRedis(t)
  const { gateway, db } = await startStack(t, { env: { REDIS_URL: redis.url } })
  const { sql } = db

  const quote = async (apiKey: string, overrides: Record<string, unknown> = {}) => {
    const response = await gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(apiKey), payload: quoteBody(overrides) })
    t.equal(response.statusCode, 200, `quote answers 200: ${response.body}`)
    return response.json()
  }
  const place = (apiKey: string, shipments: unknown[]) => gateway.inject({ method: 'POST', url: PLACE, headers: bearer(apiKey), payload: shipments as never })
  const balanceOf = async (businessId: string) => (await sql`select balance from wallets where business_id = ${businessId}`)[0]!.balance as number
  // The demo card again under the account's card name, every price doubled: version 2, new option ids.
  const doubleCardPrices = async (businessId: string) => {
    const file = { ...demoCardFile(), name: `Card ${businessId}` }
    for (const option of file.options) for (const price of option.prices) price.price *= 2
    return importRateCard(sql, file, 'NGN')
  }

  t.test('every quote carries a quote_id and its expiry, QUOTE_TTL_S (900 s) later', async (t) => {
    const account = await seedAccount(sql)
    const before = Date.now()
    const answer = await quote(account.apiKey)
    t.match(answer.quote_id, QUOTE_ID)
    const expires = Date.parse(answer.expires_at)
    t.ok(expires >= before + 900_000 && expires <= Date.now() + 900_000, `expires_at ${answer.expires_at} is 900 s after the quote`)
    t.not((await quote(account.apiKey)).quote_id, answer.quote_id, 'each quote has its own id')
  })

  t.test('the quoted price is charged after the card changed, its option id honoured; the order records the quote', async (t) => {
    const account = await seedAccount(sql, { balance: 1_000_000 })
    const oldTruck = account.options['5-tonne truck']!
    const bike = await quote(account.apiKey)
    const truck = await quote(account.apiKey, { vehicle_type: 'truck', option_id: oldTruck, weight: 1000 })
    t.equal(bike.price, 3500)
    t.equal(truck.price, 87500)
    const v2 = await doubleCardPrices(account.businessId)
    const newTruck = v2.options.find((option) => option.label === '5-tonne truck')!.id

    const placed = await place(account.apiKey, [
      shipment({ quote_id: bike.quote_id }),
      shipment(),
      // Stale for a new quote, honoured for a shipment that names the quote it came with.
      shipment({ vehicle_type: 'truck', option_id: oldTruck, weight: 100, quantity: 10, quote_id: truck.quote_id }),
      // A quote can be used again until it expires: a price list, not a coupon.
      shipment({ quote_id: bike.quote_id, weight: 1, quantity: 2 }),
    ])
    t.equal(placed.statusCode, 201, placed.body)
    t.same(placed.json().orders.map((order: { price: number }) => order.price), [3500, 7000, 87500, 3500], 'quoted, re-priced, quoted, quoted')
    t.equal(await balanceOf(account.businessId), 100_000_000 - (3500 + 7000 + 87500 + 3500) * 100)

    const [first] = placed.json().orders
    const order = (await gateway.inject({ method: 'GET', url: `/v2/business/orders/${first.order_id}`, headers: bearer(account.apiKey) })).json()
    t.equal(order.quote_id, bike.quote_id, 'the order records the quote it was charged by')
    t.equal(order.max_price, null)

    const stale = await place(account.apiKey, [shipment({ vehicle_type: 'truck', option_id: newTruck, weight: 100, quantity: 10, quote_id: truck.quote_id })])
    t.equal(stale.statusCode, 400)
    t.same(stale.json().errors, [{ index: 0, message: `[0].quote_id ${truck.quote_id} does not match this shipment: option_id differs` }])
  })

  t.test('a shipment that does not match its quote fails the batch, naming what differs', async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    const { quote_id: id } = await quote(account.apiKey)
    const response = await place(account.apiKey, [
      shipment({ quote_id: id }),
      shipment({ quote_id: id, weight: 3 }),
      shipment({ quote_id: id, vehicle_type: undefined }),
      // About 110 m north of the quoted ends; 30 m is still the same point.
      shipment({ quote_id: id, pickup_latitude: ISLAND.lat + 0.001 }),
      shipment({ quote_id: id, dropoff_latitude: IKEJA.lat + 0.001 }),
      shipment({ quote_id: id, pickup_latitude: ISLAND.lat + 0.0003, dropoff_longitude: IKEJA.lng - 0.0003 }),
    ])
    t.equal(response.statusCode, 400)
    t.equal(response.json().message, 'One or more orders could not be placed')
    t.same(response.json().errors, [
      { index: 1, message: `[1].quote_id ${id} does not match this shipment: weight differs` },
      { index: 2, message: `[2].quote_id ${id} does not match this shipment: vehicle_type differs` },
      { index: 3, message: `[3].quote_id ${id} does not match this shipment: pickup point differs` },
      { index: 4, message: `[4].quote_id ${id} does not match this shipment: dropoff point differs` },
    ])
    t.equal(await balanceOf(account.businessId), 10_000_000, 'nothing charged')
  })

  t.test("another business's quote, or an id never issued, is unknown", async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    const other = await seedAccount(sql, { balance: 100_000 })
    const { quote_id: theirs } = await quote(other.apiKey)
    const response = await place(account.apiKey, [shipment({ quote_id: theirs }), shipment({ quote_id: 'qt_0000000000000000' })])
    t.equal(response.statusCode, 400)
    t.same(response.json().errors, [
      { index: 0, message: `[0].quote_id ${theirs} is unknown` },
      { index: 1, message: '[1].quote_id qt_0000000000000000 is unknown' },
    ])
  })

  t.test('a held quote changed in Redis by anyone without the signing key is unknown; nothing is charged', async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    const cheap = await quote(account.apiKey)
    const other = await quote(account.apiKey)
    const client = new Redis(redis.url)
    t.teardown(() => client.disconnect())
    const key = (id: string) => `${db.env.QUEUE_PREFIX}:quote:${id}`
    const stored = await client.get(key(cheap.quote_id))
    t.ok(stored, 'the quote is held')
    t.notOk(stored!.startsWith('{'), 'signed, not bare JSON')
    // The price cut to 1 kobo, its MAC kept; and a valid value of one quote copied under another id.
    await client.set(key(cheap.quote_id), stored!.replace('"price":350000', '"price":1'), 'KEEPTTL')
    await client.set(key(other.quote_id), stored!, 'KEEPTTL')
    const response = await place(account.apiKey, [shipment({ quote_id: cheap.quote_id }), shipment({ quote_id: other.quote_id })])
    t.equal(response.statusCode, 400)
    t.same(response.json().errors, [
      { index: 0, message: `[0].quote_id ${cheap.quote_id} is unknown` },
      { index: 1, message: `[1].quote_id ${other.quote_id} is unknown` },
    ])
    t.equal(await balanceOf(account.businessId), 10_000_000, 'nothing charged')
  })

  t.test('max_price: a higher price fails the shipment; an equal one is charged', async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    const refused = await place(account.apiKey, [shipment({ max_price: 3500 }), shipment({ max_price: 3499.99 })])
    t.equal(refused.statusCode, 400)
    t.same(refused.json().errors, [{ index: 1, message: '[1].price 3500 exceeds max_price 3499.99' }])
    // A limit with more decimals than money has is not rounded up past itself.
    const finer = await place(account.apiKey, [shipment({ max_price: 3499.999 }), shipment({ max_price: 3500.001 }), shipment({ max_price: 3499.99999999 })])
    t.same(finer.json().errors, [
      { index: 0, message: '[0].price 3500 exceeds max_price 3499.999' },
      { index: 2, message: '[2].price 3500 exceeds max_price 3499.99999999' },
    ], 'a limit below 3500 by any amount refuses 3500; one of 3500.001 allows it')
    const { quote_id: id } = await doubleCardPrices(account.businessId).then(() => quote(account.apiKey))
    const placed = await place(account.apiKey, [shipment({ max_price: 7000 }), shipment({ quote_id: id, max_price: 7000 })])
    t.equal(placed.statusCode, 201, placed.body)
    const quoted = await place(account.apiKey, [shipment({ max_price: 5000 })])
    t.same(quoted.json().errors, [{ index: 0, message: '[0].price 7000 exceeds max_price 5000' }], 'the price it would be charged now')
  })

  t.test('a quote and the placement of the same load weigh the same, float noise and all', async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    // 5.0000004 kg is 5 kg to the milligram: the "Up to 5 kg" band, quoted and placed alike.
    const held = await quote(account.apiKey, { weight: 5.0000004 })
    const unheld = await quote(account.apiKey, { weight: 5.0000004 })
    const placed = await place(account.apiKey, [shipment({ weight: 5.0000004, quote_id: held.quote_id }), shipment({ weight: 5.0000004 })])
    t.equal(placed.statusCode, 201, placed.body)
    t.same(placed.json().orders.map((order: { price: number }) => order.price), [held.price, unheld.price], 'the held quote matches its shipment, and a fresh quote prices as the placement does')
  })

  t.test('Redis losing its data loses quotes: a shipment naming one fails as unknown, nothing is charged', async (t) => {
    const account = await seedAccount(sql, { balance: 100_000 })
    const { quote_id: id } = await quote(account.apiKey)
    const client = new Redis(redis.url)
    await client.flushall()
    client.disconnect()
    const response = await place(account.apiKey, [shipment({ quote_id: id })])
    t.equal(response.statusCode, 400)
    t.same(response.json().errors, [{ index: 0, message: `[0].quote_id ${id} is unknown` }])
    t.equal(await balanceOf(account.businessId), 10_000_000)
  })
})

t.test('a quote past its expires_at has expired, told apart from an unknown one', async (t) => {
  const { gateway, db } = await startStack(t, { env: { QUOTE_TTL_S: '1' } })
  const account = await seedAccount(db.sql, { balance: 100_000 })
  const answer = (await gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(account.apiKey), payload: quoteBody() })).json()
  t.match(answer.quote_id, QUOTE_ID)
  // The worker compares with its transaction's clock; wait, with a deadline, until that is past.
  const expiresAt = Date.parse(answer.expires_at)
  t.ok(await waitFor(async () => Date.parse((await db.sql`select now()::text as now`)[0]!.now) > expiresAt, 10_000), 'the database clock passed expires_at')
  const response = await gateway.inject({ method: 'POST', url: PLACE, headers: bearer(account.apiKey), payload: [shipment({ quote_id: answer.quote_id })] })
  t.equal(response.statusCode, 400)
  t.same(response.json().errors, [{ index: 0, message: `[0].quote_id ${answer.quote_id} has expired; request a new quote` }])
})

t.test('with Redis out of reach, quotes still answer, without a quote_id or expiry', async (t) => {
  const redis = await startOwnRedis(t)
  const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url } })
  const account = await seedAccount(db.sql)
  await redis.stop()
  const response = await gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(account.apiKey), payload: quoteBody() })
  t.equal(response.statusCode, 200, response.body)
  t.match(response.json(), { price: 3500, quote_id: null, expires_at: null })
})
