import t from 'tap'
import { seedAccount } from '../../helpers/accounts.js'
import { assertError, distancePrice, ends, expectedKm, ISO_UTC, QUOTE, quoteBody, startGateway, type ExpectedError, type Point } from '../../helpers/gateway.js'
import { IKEJA, ISLAND, KANO, LEKKI } from '../../helpers/shipments.js'
import type { Test } from 'tap'

const QUOTE_ID = /^qt_[0-9A-HJKMNP-TV-Z]{16}$/

/** A held quote's two fields, checked for shape: the price they hold is checked beside them. */
function held(t: Test, answer: { quote_id?: unknown; expires_at?: unknown }) {
  t.match(answer.quote_id, QUOTE_ID, 'the quote is held under a qt_ id')
  t.match(answer.expires_at, ISO_UTC, 'and says until when')
  return { quote_id: answer.quote_id, expires_at: answer.expires_at }
}

t.test('gateway quotes', async (t) => {
  const { sql, account, bare, quote } = await startGateway(t)

  t.test('quote validation: class-validator wording, every violation listed', async (t) => {
    const invalid = async (body: unknown, message: string, errors: ExpectedError['errors'] = 'listed') =>
      assertError(t, await quote(account.apiKey, body), { status: 400, path: QUOTE, message, errors })

    await invalid(quoteBody({ weight: 0.05 }), 'weight must not be less than 0.1', [{ field: 'weight', message: 'weight must not be less than 0.1' }])
    await invalid(quoteBody({ weight: 0 }), 'weight must not be less than 0.1')
    await invalid(quoteBody({ pickup_address: undefined }), 'pickup_address should not be empty', [{ field: 'pickup_address', message: 'pickup_address should not be empty' }])
    await invalid(quoteBody({ pickup_address: null }), 'pickup_address should not be empty')
    await invalid(quoteBody({ pickup_address: '   ' }), 'pickup_address should not be empty')
    await invalid(quoteBody({ dropoff_address: 'ab' }), 'dropoff_address must be longer than or equal to 3 characters', [{ field: 'dropoff_address', message: 'dropoff_address must be longer than or equal to 3 characters' }])
    await invalid(quoteBody({ dropoff_address: 'x'.repeat(501) }), 'dropoff_address must be shorter than or equal to 500 characters')
    await invalid(quoteBody({ dropoff_address: 42 }), 'dropoff_address must be a string')
    await invalid(quoteBody({ vehicle_type: 'car' }), 'vehicle_type must be one of the following values: bike, bus_van, truck')
    await invalid(quoteBody({ vehicle_type: 'BIKE' }), 'vehicle_type must be one of the following values: bike, bus_van, truck')
    await invalid(quoteBody({ weight: '2' }), 'weight must be a number', [{ field: 'weight', message: 'weight must be a number' }])
    await invalid(quoteBody({ weight: undefined }), 'weight should not be empty')
    await invalid([quoteBody()], 'body must be a JSON object', [{ message: 'body must be a JSON object' }])
    assertError(t, await quote(account.apiKey, JSON.stringify('a string'), { 'content-type': 'application/json' }), { status: 400, path: QUOTE, message: 'body must be a JSON object', errors: 'listed' })
    assertError(t, await quote(account.apiKey, 'null', { 'content-type': 'application/json' }), { status: 400, path: QUOTE, message: 'body must be a JSON object', errors: 'listed' })
    await invalid(quoteBody({ option_id: account.options['Up to 5 kg'] }), 'option_id must be omitted for bike; the band is chosen by weight', [{ field: 'option_id', message: 'option_id must be omitted for bike; the band is chosen by weight' }])
    await invalid(quoteBody({ vehicle_type: 'truck' }), 'option_id is required when vehicle_type is truck')
    await invalid(quoteBody({ vehicle_type: 'bus_van' }), 'option_id is required when vehicle_type is bus_van')
    await invalid(quoteBody({ vehicle_type: 'truck', option_id: ' ' }), 'option_id should not be empty', [{ field: 'option_id', message: 'option_id should not be empty' }])
    await invalid(quoteBody({ vehicle_type: undefined, option_id: account.options['5-tonne truck'] }), 'vehicle_type is required when option_id is sent')
    await invalid(quoteBody({ pickup_longitude: undefined }), 'pickup_longitude is required when pickup_latitude is sent', [{ field: 'pickup_longitude', message: 'pickup_longitude is required when pickup_latitude is sent' }])
    await invalid(quoteBody({ dropoff_latitude: undefined }), 'dropoff_latitude is required when dropoff_longitude is sent')
    await invalid(quoteBody({ pickup_latitude: 91 }), 'pickup_latitude must not be greater than 90')
    await invalid(quoteBody({ dropoff_longitude: -180.5 }), 'dropoff_longitude must not be less than -180')

    // Several mistakes at once: `message` is the first, `errors` has them all.
    await invalid({ dropoff_address: 'ab', weight: 'heavy', vehicle_type: 'car', pickup_latitude: 6.45 }, 'pickup_address should not be empty', [
      { field: 'pickup_address', message: 'pickup_address should not be empty' },
      { field: 'dropoff_address', message: 'dropoff_address must be longer than or equal to 3 characters' },
      { field: 'weight', message: 'weight must be a number' },
      { field: 'vehicle_type', message: 'vehicle_type must be one of the following values: bike, bus_van, truck' },
      { field: 'pickup_longitude', message: 'pickup_longitude is required when pickup_latitude is sent' },
    ])
  })

  t.test('pricing refusals reach the caller as 400 with the exact message', async (t) => {
    const refused = async (apiKey: string, body: unknown, message: string) =>
      assertError(t, await quote(apiKey, body), { status: 400, path: QUOTE, message })
    const truck = account.options['5-tonne truck']

    await refused(account.apiKey, quoteBody({ vehicle_type: 'truck', option_id: 'opt_0000000000AA' }), 'option_id opt_0000000000AA is not in your rate card for truck; read GET /business/rate-cards again')
    // A real id of the card, but for another vehicle type.
    await refused(account.apiKey, quoteBody({ vehicle_type: 'bus_van', option_id: truck }), `option_id ${truck} is not in your rate card for bus_van; read GET /business/rate-cards again`)
    await refused(account.apiKey, quoteBody({ weight: 20.01 }), 'weight exceeds the largest bike band (20 kg); use bus_van or truck')
    await refused(account.apiKey, quoteBody({ vehicle_type: 'truck', option_id: truck, weight: 5000.01 }), 'weight exceeds the capacity of 5-tonne truck (5000 kg)')
    await refused(account.apiKey, quoteBody({ vehicle_type: 'bus_van', option_id: account.options['Mini van'], weight: 1001 }), 'weight exceeds the capacity of Mini van (1000 kg)')
    await refused(account.apiKey, quoteBody(ends(KANO, IKEJA)), 'pickup point is outside the service zones of your rate card')
    await refused(account.apiKey, quoteBody(ends(ISLAND, KANO)), 'dropoff point is outside the service zones of your rate card')
    await refused(bare.apiKey, quoteBody(), 'No rate card is enabled for this account')
    await refused(bare.apiKey, quoteBody({ vehicle_type: 'truck', option_id: truck }), 'No rate card is enabled for this account')
    await refused(account.apiKey, quoteBody({ pickup_latitude: undefined, pickup_longitude: undefined, dropoff_latitude: undefined, dropoff_longitude: undefined, pickup_address: 'Ikeja', dropoff_address: 'Qwzx Plaza' }), 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude')
    await refused(account.apiKey, quoteBody({ pickup_latitude: undefined, pickup_longitude: undefined, pickup_address: 'Qwzx Plaza' }), 'pickup_address could not be located; send pickup_latitude and pickup_longitude')

    // Distance pricing bounds no weight, but a price must stay an exact number (1.8e308 kg once priced as null).
    await refused(account.apiKey, quoteBody({ vehicle_type: undefined, weight: 1.7976931348623157e308 }), 'weight is too large to price')
    await refused(bare.apiKey, quoteBody({ vehicle_type: undefined, weight: 1e15 }), 'weight is too large to price')

    const oneWay = await seedAccount(sql, {
      name: 'One Way Ltd',
      card: {
        name: 'One Way Card',
        currency: 'NGN',
        zones: [
          { name: 'Alpha', polygon: [[3.37, 6.41], [3.45, 6.41], [3.45, 6.47], [3.37, 6.47], [3.37, 6.41]] },
          { name: 'Beta', polygon: [[3.45, 6.41], [3.62, 6.41], [3.62, 6.48], [3.45, 6.48], [3.45, 6.41]] },
        ],
        options: [{ vehicle_type: 'truck', label: '5-tonne truck', max_weight_kg: 5000, prices: [{ from: 'Alpha', to: 'Beta', price: 45000 }] }],
      },
    })
    const oneWayTruck = { vehicle_type: 'truck', option_id: oneWay.options['5-tonne truck'], weight: 100 }
    const there = await quote(oneWay.apiKey, quoteBody({ ...oneWayTruck, ...ends(ISLAND, LEKKI) }))
    t.equal(there.statusCode, 200, there.body)
    t.equal(there.json().price, 45000)
    await refused(oneWay.apiKey, quoteBody({ ...oneWayTruck, ...ends(LEKKI, ISLAND) }), '5-tonne truck has no price from Beta to Alpha')
  })

  t.test('rate-card quotes', async (t) => {
    const cases: { body: Record<string, unknown>; from: Point; to: Point; price: number; option: string; mode: string; zones: [string, string] }[] = [
      { body: { weight: 2 }, from: ISLAND, to: IKEJA, price: 3500, option: 'Up to 5 kg', mode: 'MOTORBIKE', zones: ['Island', 'Ikeja'] },
      { body: { weight: 5 }, from: ISLAND, to: IKEJA, price: 3500, option: 'Up to 5 kg', mode: 'MOTORBIKE', zones: ['Island', 'Ikeja'] },
      { body: { weight: 5.01 }, from: IKEJA, to: ISLAND, price: 4900, option: '5 to 10 kg', mode: 'MOTORBIKE', zones: ['Ikeja', 'Island'] },
      { body: { weight: 20 }, from: LEKKI, to: ISLAND, price: 5300, option: '10 to 20 kg', mode: 'MOTORBIKE', zones: ['Lekki', 'Island'] },
      { body: { vehicle_type: 'bus_van', option_id: account.options['Mini van'], weight: 1000 }, from: ISLAND, to: LEKKI, price: 15000, option: 'Mini van', mode: 'BUS_VAN', zones: ['Island', 'Lekki'] },
      { body: { vehicle_type: 'truck', option_id: account.options['5-tonne truck'], weight: 5000 }, from: LEKKI, to: IKEJA, price: 112500, option: '5-tonne truck', mode: 'TRUCK', zones: ['Lekki', 'Ikeja'] },
    ]
    for (const c of cases) {
      const response = await quote(account.apiKey, quoteBody({ ...c.body, ...ends(c.from, c.to) }))
      t.equal(response.statusCode, 200, response.body)
      t.strictSame(response.json(), {
        price: c.price,
        distance_km: expectedKm(c.from, c.to),
        currency: 'NGN',
        pricing_model: 'rate_card',
        option_id: account.options[c.option],
        option_label: c.option,
        delivery_mode: c.mode,
        from_zone_name: c.zones[0],
        to_zone_name: c.zones[1],
        ...held(t, response.json()),
      }, `${c.option} ${c.zones.join(' to ')}`)
    }
  })

  t.test('distance quotes', async (t) => {
    const cases: { from: Point; to: Point; weight: number; mode: string }[] = [
      { from: ISLAND, to: IKEJA, weight: 2, mode: 'MOTORBIKE' },
      { from: ISLAND, to: ISLAND, weight: 0.1, mode: 'MOTORBIKE' },
      { from: LEKKI, to: IKEJA, weight: 20, mode: 'MOTORBIKE' },
      { from: LEKKI, to: IKEJA, weight: 20.01, mode: 'BUS_VAN' },
      { from: LEKKI, to: ISLAND, weight: 1000, mode: 'BUS_VAN' },
      { from: IKEJA, to: LEKKI, weight: 1000.5, mode: 'TRUCK' },
      { from: ISLAND, to: LEKKI, weight: 12345.67, mode: 'TRUCK' },
    ]
    for (const c of cases) {
      for (const who of [account, bare]) {
        const response = await quote(who.apiKey, quoteBody({ vehicle_type: undefined, weight: c.weight, ...ends(c.from, c.to) }))
        t.equal(response.statusCode, 200, response.body)
        const km = expectedKm(c.from, c.to)
        t.strictSame(response.json(), {
          price: distancePrice(km, c.weight),
          distance_km: km,
          currency: 'NGN',
          pricing_model: 'distance',
          option_id: null,
          option_label: null,
          delivery_mode: c.mode,
          from_zone_name: null,
          to_zone_name: null,
          ...held(t, response.json()),
        }, `${c.weight} kg over ${km} km`)
      }
    }
    const short = await quote(bare.apiKey, quoteBody({ vehicle_type: undefined, weight: 1, ...ends(ISLAND, ISLAND) }))
    t.equal(short.json().price, 1000, 'a short, light parcel pays the minimum fare')
    t.equal(short.json().distance_km, 0)
  })

  t.test('quotes from addresses alone are geocoded', async (t) => {
    // The gazetteer's points for the two districts, copied so a moved point shows up here.
    const ikeja = { lat: 6.6018, lng: 3.3515 }
    const victoriaIsland = { lat: 6.4281, lng: 3.4219 }
    const response = await quote(account.apiKey, { pickup_address: 'Ikeja', dropoff_address: 'Victoria Island', weight: 3, vehicle_type: 'bike' })
    t.equal(response.statusCode, 200, response.body)
    t.strictSame(response.json(), {
      price: 3500,
      distance_km: expectedKm(ikeja, victoriaIsland),
      currency: 'NGN',
      pricing_model: 'rate_card',
      option_id: account.options['Up to 5 kg'],
      option_label: 'Up to 5 kg',
      delivery_mode: 'MOTORBIKE',
      from_zone_name: 'Ikeja',
      to_zone_name: 'Island',
      ...held(t, response.json()),
    })
    // One end pinned, the other geocoded.
    const mixed = await quote(account.apiKey, { pickup_address: 'somewhere pinned', pickup_latitude: LEKKI.lat, pickup_longitude: LEKKI.lng, dropoff_address: '14 Adeola Odeku Street, Victoria Island', weight: 3, vehicle_type: 'bike' })
    t.equal(mixed.statusCode, 200, mixed.body)
    t.match(mixed.json(), { price: 2800, from_zone_name: 'Lekki', to_zone_name: 'Island', distance_km: expectedKm(LEKKI, victoriaIsland) })
  })
})
