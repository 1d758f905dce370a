import t from 'tap'
import { importRateCard } from '../../../shared/pricing/rate-card-file.js'
import { publishInvalidation } from '../../../shared/invalidation.js'
import { demoCardFile, seedAccount } from '../../helpers/accounts.js'
import { assertError, ISO_UTC, QUOTE, quoteBody, startGateway } from '../../helpers/gateway.js'
import { waitForValue } from '../../helpers/processes.js'

t.test('gateway rate cards', async (t) => {
  const { db, sql, publisher, account, bare, quote, catalog } = await startGateway(t)

  t.test('catalog', async (t) => {
    const response = await catalog(account.apiKey)
    t.equal(response.statusCode, 200)
    const body = response.json()
    t.match(body.updated_at, ISO_UTC)
    const option = (label: string, min: number | null, max: number) => ({ id: account.options[label], label, min_weight_kg: min, max_weight_kg: max })
    t.strictSame(body, {
      currency: 'NGN',
      rate_card_id: account.card!.rate_card_id,
      version: 1,
      updated_at: body.updated_at,
      rate_cards: [
        { vehicle_type: 'bike', delivery_mode: 'MOTORBIKE', options: [option('Up to 5 kg', 0, 5), option('5 to 10 kg', 5, 10), option('10 to 20 kg', 10, 20)] },
        { vehicle_type: 'bus_van', delivery_mode: 'BUS_VAN', options: [option('Mini van', null, 1000)] },
        { vehicle_type: 'truck', delivery_mode: 'TRUCK', options: [option('5-tonne truck', null, 5000)] },
      ],
      zones: ['Island', 'Lekki', 'Mainland', 'Ikeja'],
    })
    for (const id of Object.values(account.options)) t.match(id, /^opt_[0-9A-HJKMNP-TV-Z]{12}$/)

    const empty = await catalog(bare.apiKey)
    t.equal(empty.statusCode, 200)
    t.strictSame(empty.json().rate_cards, [])
    t.equal(empty.json().currency, 'NGN')
  })

  t.test('tenant isolation: another business cannot use my option ids', async (t) => {
    const other = await seedAccount(sql, { name: 'Other Ltd' })
    const mine = account.options['5-tonne truck']
    assertError(t, await quote(other.apiKey, quoteBody({ vehicle_type: 'truck', option_id: mine })), {
      status: 400,
      path: QUOTE,
      message: `option_id ${mine} is not in your rate card for truck; read GET /business/rate-cards again`,
    })
    const own = await quote(other.apiKey, quoteBody({ vehicle_type: 'truck', option_id: other.options['5-tonne truck'] }))
    t.equal(own.statusCode, 200, own.body)
    t.equal(own.json().option_id, other.options['5-tonne truck'])
    const theirs = (await catalog(other.apiKey)).json()
    t.notOk(JSON.stringify(theirs).includes(mine), "A's ids never appear in B's catalog")
  })

  t.test('a re-import changes option ids; the old id is refused once the invalidation arrives', async (t) => {
    const cardName = 'Reimport Card'
    const tenant = await seedAccount(sql, { name: 'Reimport Ltd', card: { ...demoCardFile(), name: cardName } })
    const oldTruck = tenant.options['5-tonne truck']
    const truckQuote = (optionId: string) => quote(tenant.apiKey, quoteBody({ vehicle_type: 'truck', option_id: optionId, weight: 3000 }))
    t.equal((await truckQuote(oldTruck)).statusCode, 200, 'the old id works and the card is now cached')

    const reimported = await importRateCard(sql, { ...demoCardFile(), name: cardName }, 'NGN')
    t.equal(reimported.rate_card_id, tenant.card!.rate_card_id)
    t.equal(reimported.version, 2)
    const newTruck = reimported.options.find((option) => option.label === '5-tonne truck')!.id
    t.not(newTruck, oldTruck)
    await publishInvalidation(publisher, db.config.QUEUE_PREFIX, { kind: 'rate-card', rateCardId: reimported.rate_card_id })
    // How fast is the bench's business (docs/contracts.md); here the refusal must come, well within 10 s.
    const { held, value: response } = await waitForValue(() => truckQuote(oldTruck), (r) => r.statusCode !== 200, 10_000)
    t.ok(held, 'refused once the invalidation arrives')
    assertError(t, response, { status: 400, path: QUOTE, message: `option_id ${oldTruck} is not in your rate card for truck; read GET /business/rate-cards again` })

    const fresh = await truckQuote(newTruck)
    t.equal(fresh.statusCode, 200, fresh.body)
    t.equal(fresh.json().option_id, newTruck)
    const body = (await catalog(tenant.apiKey)).json()
    t.equal(body.version, 2)
    t.equal(body.rate_cards.find((group: any) => group.vehicle_type === 'truck').options[0].id, newTruck)
  })
})
