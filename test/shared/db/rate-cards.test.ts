import t from 'tap'
import { createBusiness, setBusinessRateCard } from '../../../shared/db/businesses.js'
import { DEFAULT_PLATFORM_RATES, getPlatformRates } from '../../../shared/db/platform-rates.js'
import { changePlatformRates } from '../../../shared/pricing/platform-rates.js'
import { loadRateCard, loadRateCardForBusiness, findRateCardName } from '../../../shared/db/rate-cards.js'
import { importRateCard } from '../../../shared/pricing/rate-card-file.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import { priceShipment } from '../../../shared/pricing/engine.js'
import { priceKey } from '../../../shared/courier.js'
import { demoCardFile } from '../../helpers/accounts.js'
import { demoCardText, positionOf, spoiled } from '../../helpers/card-text.js'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { useTestDb } from '../../helpers/db.js'
import { newUuid } from '../../../shared/ids.js'

const rect = (w: number, s: number, e: number, n: number) => [[w, s], [e, s], [e, n], [w, n], [w, s]]
// A simple closed ring of `vertices` points around Lagos Island.
const circle = (vertices: number) => {
  const ring = Array.from({ length: vertices }, (_, i) => [3.42 + 0.03 * Math.cos((2 * Math.PI * i) / vertices), 6.44 + 0.03 * Math.sin((2 * Math.PI * i) / vertices)])
  return [...ring, ring[0]]
}

t.test('rate cards: import, version, load, reject', async (t) => {
  const { sql } = await useTestDb(t)
  const counts = async () => (await sql`select (select count(*) from rate_cards)::int as cards, (select count(*) from rate_card_versions)::int as versions, (select count(*) from options)::int as options, (select count(*) from zone_prices)::int as prices`)[0]

  t.test('the demo card imports and prices Island to Ikeja', async (t) => {
    const imported = await importRateCard(sql, demoCardFile(), 'NGN')
    t.equal(imported.version, 1)
    t.same(imported.options.map((option) => [option.vehicle_type, option.label]), [['bike', 'Up to 5 kg'], ['bike', '5 to 10 kg'], ['bike', '10 to 20 kg'], ['bus_van', 'Mini van'], ['truck', '5-tonne truck']])
    for (const option of imported.options) t.match(option.id, /^opt_[0-9A-HJKMNP-TV-Z]{12}$/)
    const card = (await loadRateCard(sql, imported.rate_card_id))!
    t.same(card.zones.map((zone) => zone.name), ['Island', 'Lekki', 'Mainland', 'Ikeja'], 'zones keep the file order')
    t.equal(card.options.find((option) => option.label === 'Mini van')!.maxWeightKg, 1000)
    t.equal(card.options[0].prices.get(priceKey('Lekki', 'Island')), 280_000, 'prices are stored in kobo, one-way')
    t.equal(card.options[0].prices.size, 16, 'every ordered zone pair has a price')
    const quote = priceShipment({ pickup: { lat: 6.4281, lng: 3.4219 }, dropoff: { lat: 6.6018, lng: 3.3515 }, weight: 7, vehicleType: 'bike' }, 20, card, DEFAULT_PLATFORM_RATES, 'NGN')
    t.match(quote, { price: 490_000, optionLabel: '5 to 10 kg', fromZoneName: 'Island', toZoneName: 'Ikeja' })
  })

  t.test('re-import of a name makes version 2 with new ids; the newest version is in force', async (t) => {
    const file = { ...demoCardFile(), name: 'Versioned' }
    const first = await importRateCard(sql, file, 'NGN')
    file.options[4].prices[0].price = 50000
    const second = await importRateCard(sql, file, 'NGN')
    t.equal(second.rate_card_id, first.rate_card_id)
    t.equal(second.version, 2)
    t.notOk(second.options.some((option) => first.options.some((old) => old.id === option.id)), 'no option id survives')
    const card = (await loadRateCard(sql, first.rate_card_id))!
    t.equal(card.version, 2)
    t.same(card.options.map((option) => option.id), second.options.map((option) => option.id))
    t.equal(card.options[4].prices.get(priceKey('Island', 'Island')), 5_000_000)

    const business = await createBusiness(sql, newUuid(), { name: 'B', phone: '1', address: 'Yaba', state: 'Lagos', currency: 'NGN' })
    t.equal(await loadRateCardForBusiness(sql, business.id), null, 'no card enabled')
    await setBusinessRateCard(sql, business.id, first.rate_card_id)
    t.equal((await loadRateCardForBusiness(sql, business.id))?.versionId, card.versionId)
    t.equal(await findRateCardName(sql, first.rate_card_id), 'Versioned')
    t.equal(await findRateCardName(sql, '00000000-0000-4000-8000-000000000000'), null)
    t.equal(await findRateCardName(sql, 'not-a-uuid'), null)
  })

  t.test('concurrent imports of one new name make versions 1 and 2 of one card', async (t) => {
    const file = { ...demoCardFile(), name: 'Raced' }
    const results = await Promise.all([importRateCard(sql, file, 'NGN'), importRateCard(sql, file, 'NGN')])
    t.same(results.map((result) => result.version).sort(), [1, 2])
    t.equal(results[0].rate_card_id, results[1].rate_card_id)
  })

  t.test('an invalid file is refused with a clear message and writes nothing', async (t) => {
    const before = await counts()
    const cases: [string, (file: any) => void, RegExp][] = [
      ['not an object', (file) => { file.zones = 'x' }, /^zones: /],
      ['currency of another deployment', (file) => { file.currency = 'USD' }, /currency USD does not match this deployment's currency NGN/],
      ['overlapping bike bands', (file) => { file.options[1].min_weight_kg = 4 }, /bike bands Up to 5 kg and 5 to 10 kg overlap/],
      ['a gap between bike bands', (file) => { file.options[2].min_weight_kg = 12 }, /bike bands 5 to 10 kg and 10 to 20 kg leave a gap from 10 kg to 12 kg/],
      ['unknown zone in a price', (file) => { file.options[3].prices[2].to = 'Ajah' }, /options\[3\] \(Mini van\)\.prices\[2\]\.to: unknown zone Ajah/],
      ['duplicate zone names', (file) => { file.zones[1].name = 'Island' }, /zone Island is listed twice/],
      ['unclosed ring', (file) => { file.zones[0].polygon.pop() }, /zones\[0\]\.polygon \(Island\): ring is not closed/],
      ['fewer than 4 positions', (file) => { file.zones[0].polygon = [[3.37, 6.41], [3.45, 6.41], [3.37, 6.41]] }, /ring needs at least 4 positions/],
      ['self-intersecting ring', (file) => { file.zones[0].polygon = [[3.37, 6.41], [3.45, 6.47], [3.45, 6.41], [3.37, 6.47], [3.37, 6.41]] }, /ring intersects itself/],
      ['a ring past the vertex cap', (file) => { file.zones[0].polygon = circle(10_000) }, /^zones\[0\]\.polygon \(Island\): ring must have at most 500 vertices \(this one has 10000\)$/],
      ['price with 3 decimals', (file) => { file.options[0].prices[0].price = 1500.125 }, /1500\.125 has more than 2 decimals/],
      // Past it a price is no longer exact in kobo, and at 1e17 it overflows the column.
      ['a price past the cap', (file) => { file.options[0].prices[0].price = 1e17 }, /options\[0\] \(Up to 5 kg\)\.prices\[0\]\.price: 100000000000000000 is more than the most a card may charge, 1000000000/],
      ['negative price', (file) => { file.options[0].prices[0].price = -1 }, /options\[0\]\.prices\[0\]\.price: must not be negative/],
      ['duplicate pair in one option', (file) => { file.options[0].prices[1] = { ...file.options[0].prices[0] } }, /a price from Island to Island is listed twice/],
      ['duplicate label', (file) => { file.options[3].label = '5-tonne truck' }, /label 5-tonne truck is used by two options/],
      ['a NUL in a label', (file) => { file.options[0].label = 'Up to\u0000 5 kg' }, /^options\[0\]\.label: must not contain a NUL character or an unpaired surrogate$/],
      ['half a surrogate pair in the name', (file) => { file.name = `${file.name} \ud83d` }, /^name: must not contain a NUL character or an unpaired surrogate$/],
      ['unknown vehicle type', (file) => { file.options[3].vehicle_type = 'boat' }, /options\[3\]\.vehicle_type: must be one of bike, bus_van, truck/],
    ]
    for (const [name, spoil, message] of cases) {
      const file = demoCardFile()
      file.name = `Bad ${name}`
      spoil(file)
      await t.rejects(importRateCard(sql, file, 'NGN'), { name: 'RateCardFileError', message }, name)
    }
    t.same(await counts(), before, 'nothing was written')

    // Every problem is reported, each at the path where it is, the first one being the message.
    const many = demoCardFile()
    many.name = 'Bad many'
    many.zones[0].polygon.pop()
    many.options[3].prices[2].to = 'Ajah'
    many.options[0].prices[0].price = 1500.125
    const error = await importRateCard(sql, many, 'USD').catch((err: unknown) => err)
    t.ok(error instanceof RateCardFileError)
    const problems = error instanceof RateCardFileError ? error.problems : []
    t.same(problems.map((problem) => problem.path), ['currency', 'zones[0].polygon', 'options[0].prices[0].price', 'options[3].prices[2].to'], 'in the order of the file')
    t.equal(error instanceof Error ? error.message : '', problems[0]?.message)
    t.match(problems[3]?.message, /^options\[3\] \(Mini van\)\.prices\[2\]\.to: unknown zone Ajah$/)
    t.same(await counts(), before, 'nothing was written')

    // A part out of shape hides no problem of the parts that have theirs, and makes none up.
    const mixed = demoCardFile()
    mixed.name = '   '
    mixed.options[0].prices[1].price = -1
    mixed.zones[1].polygon.pop()
    mixed.options[1].prices[3].to = 'Ajah'
    mixed.options[2].min_weight_kg = 12
    const pathsOf = async (file: unknown, currency: string) => {
      const refused = await importRateCard(sql, file, currency).catch((err: unknown) => err)
      return refused instanceof RateCardFileError ? refused.problems.map((problem) => problem.path) : []
    }
    t.same(await pathsOf(mixed, 'USD'), ['name', 'options[0].prices[1].price', 'currency', 'zones[1].polygon', 'options[1].prices[3].to', 'options[2].min_weight_kg'], 'two out of shape, four against the rules')
    const unsure = demoCardFile()
    unsure.zones[3].name = '' // a price naming Ikeja is not a price naming an unknown zone
    unsure.options[1].vehicle_type = 'bicycle' // nor do the bands either side of it leave a gap
    t.same(await pathsOf(unsure, 'NGN'), ['zones[3].name', 'options[1].vehicle_type'])
    t.same(await counts(), before, 'nothing was written')
    const valid = demoCardFile()
    valid.zones[0].polygon = rect(3.37, 6.41, 3.45, 6.47).reverse()
    t.equal((await importRateCard(sql, { ...valid, name: 'Clockwise' }, 'NGN')).version, 1, 'either ring orientation is accepted')
  })

  // What the console's upload and `ratecard:import` both go through: the file's text as written.
  const refusalOf = async (text: string) => {
    const error = await importRateCardAs(sql, 'test', text, 'NGN').catch((err: unknown) => err)
    if (!(error instanceof RateCardFileError)) throw new Error(`expected a RateCardFileError, got ${String(error)}`)
    return error
  }
  const imports = async () => (await sql`select count(*)::int as count from audit_log where action = 'ratecard.import'`)[0].count

  t.test('an uploaded file: every problem, out of shape or against the rules, at its line and column of the text as written', async (t) => {
    const before = [await counts(), await imports()]
    const text = spoiled(demoCardText(), [
      ['"name": "Lagos Demo"', '"name": "   "'],
      ['"currency": "NGN"', '"currency": "USD"'],
      ['[3.45,6.48],[3.45,6.41]]}', '[3.45,6.48]]}'],
      ['{"from":"Island","to":"Lekki","price":2500}', '{"from":"Island","to":"Lekki","price":-2500}'],
      ['{"from":"Island","to":"Ikeja","price":4900}', '{"from":"Island","to":"Ajah","price":4900}'],
      ['"label":"10 to 20 kg","min_weight_kg":10', '"label":"10 to 20 kg","min_weight_kg":12'],
    ])
    const error = await refusalOf(text)
    t.same(error.problems.map((problem) => [problem.path, problem.at]), [
      ['name', positionOf(text, '"name": "   "')],
      ['options[0].prices[1].price', positionOf(text, '"price":-2500')],
      ['currency', positionOf(text, '"currency"')],
      ['zones[1].polygon', positionOf(text, '"polygon":[[3.45,6.41],[3.62')],
      ['options[1].prices[3].to', positionOf(text, '"to":"Ajah"')],
      ['options[2].min_weight_kg', positionOf(text, '"min_weight_kg":12')],
    ], 'the two out of shape hide none of the four against the rules')
    t.same(error.problems[4].at, { line: 36, column: 26 }, 'the line of the file, not of JSON.stringify(file, null, 2)')
    t.match(error.problems.map((problem) => problem.message), [/^name: must not be empty$/, /must not be negative/, /currency USD does not match/, /ring is not closed/, /unknown zone Ajah/, /leave a gap from 10 kg to 12 kg/])
    t.equal(error.unlisted, 0)
    t.equal(error.message, error.problems[0].message)
    t.same([await counts(), await imports()], before, 'nothing was written')
  })

  t.test('an uploaded file with more problems than a refusal lists: the first 100, each at its line, and how many more', async (t) => {
    const text = demoCardText().replace(/"price":(\d+)/g, '"price":$1.125').replaceAll('"to":"Ikeja"', '"to":"Ikeja2"').replaceAll('"from":"Ikeja"', '"from":"Ikeja2"')
    const file = JSON.parse(text)
    const prices: { from: string; to: string }[] = file.options.flatMap((option: { prices: unknown[] }) => option.prices)
    const total = prices.length + prices.filter((price) => price.from === 'Ikeja2').length + prices.filter((price) => price.to === 'Ikeja2').length
    t.ok(total > 100, `${total} problems`)
    const error = await refusalOf(text)
    t.equal(error.problems.length, 100)
    t.equal(error.unlisted, total - 100)
    // Each price is on a line of its own: a problem of the n-th price is on the n-th price line, at its field's name.
    const lines = text.split('\n')
    const priceLines = lines.flatMap((line, index) => (line.trimStart().startsWith('{"from"') ? [index + 1] : []))
    const firstOf = file.options.map((_: unknown, index: number) => file.options.slice(0, index).reduce((sum: number, option: { prices: unknown[] }) => sum + option.prices.length, 0))
    for (const problem of error.problems) {
      const [, option, price, field] = /^options\[(\d+)\]\.prices\[(\d+)\]\.(from|to|price)$/.exec(problem.path) ?? []
      const line = priceLines[firstOf[Number(option)] + Number(price)]
      t.same(problem.at, { line, column: lines[line - 1].indexOf(`"${field}"`) + 1 }, problem.path)
    }
  })

  t.test('an uploaded file that is not JSON: where its syntax breaks, in the text as written', async (t) => {
    const before = await counts()
    const text = spoiled(demoCardText(), [['{"from":"Island","to":"Lekki","price":2500},', '{"from":"Island","to":"Lekki","price":2500}']])
    const error = await refusalOf(text)
    t.same(error.problems, [{ path: '', message: "not valid JSON: expected ',' or ']', found '{'", at: positionOf(text, '{"from":"Island","to":"Mainland","price":2500}') }])
    t.same(error.problems[0].at, { line: 15, column: 9 })
    const unclosed = await refusalOf('{\n  "name": "Lagos",\n  "zones": [\n')
    t.same(unclosed.problems, [{ path: '', message: "not valid JSON: the file ends before an array is closed: a ']' is missing", at: { line: 4, column: 1 } }])
    t.same(await counts(), before, 'nothing was written')
  })

  t.test('a file saved with a byte-order mark (as Windows Notepad saves UTF-8) reads as the same file, placed as the operator sees it', async (t) => {
    const text = spoiled(demoCardText(), [['{"from":"Island","to":"Lekki","price":2500}', '{"from":"Island","to":"Lekki","price":-2500}']])
    const withMark = await refusalOf(`\uFEFF${text}`)
    t.same(withMark.problems, (await refusalOf(text)).problems, 'the same problems at the same lines and columns')
    const broken = await refusalOf('\uFEFF{"name": }')
    t.same(broken.problems[0]?.at, { line: 1, column: 10 }, 'a syntax error on the first line is placed without the mark')
    const imported = await importRateCardAs(sql, 'test', `\uFEFF${JSON.stringify({ ...JSON.parse(demoCardText()), name: 'Saved By Notepad' })}`, 'NGN')
    t.equal(imported.name, 'Saved By Notepad', 'a good file with a mark is imported')
  })

  t.test('platform rates: defaults, partial change in major units, validation', async (t) => {
    // The ETA speeds of DESIGN 14, the defaults until an operator sets them.
    const SPEEDS = { bikeSpeedKmh: 25, carSpeedKmh: 30, busVanSpeedKmh: 25, truckSpeedKmh: 20 }
    t.same(await getPlatformRates(sql), { baseFare: 50_000, perKm: 12_000, perKg: 5_000, minFare: 100_000, roadFactor: 1.3, maxDistanceKm: 80, cancelFreeWindowS: 120, cancellationFeePercent: 25, ...SPEEDS })
    t.same(await changePlatformRates(sql, { perKm: 150.5, roadFactor: 1.4 }), { baseFare: 50_000, perKm: 15_050, perKg: 5_000, minFare: 100_000, roadFactor: 1.4, maxDistanceKm: 80, cancelFreeWindowS: 120, cancellationFeePercent: 25, ...SPEEDS })
    t.same(await changePlatformRates(sql, { minFare: 1200 }), { baseFare: 50_000, perKm: 15_050, perKg: 5_000, minFare: 120_000, roadFactor: 1.4, maxDistanceKm: 80, cancelFreeWindowS: 120, cancellationFeePercent: 25, ...SPEEDS }, 'earlier changes stay')
    t.same(await getPlatformRates(sql), { baseFare: 50_000, perKm: 15_050, perKg: 5_000, minFare: 120_000, roadFactor: 1.4, maxDistanceKm: 80, cancelFreeWindowS: 120, cancellationFeePercent: 25, ...SPEEDS })
    await t.rejects(changePlatformRates(sql, { baseFare: -1 }), { name: 'PlatformRatesError' })
    await t.rejects(changePlatformRates(sql, { perKg: 1.234 }), { name: 'PlatformRatesError' })
    await t.rejects(changePlatformRates(sql, { roadFactor: 0.9 }), { name: 'PlatformRatesError' })
    await t.rejects(changePlatformRates(sql, { maxDistanceKm: 0 }), { name: 'PlatformRatesError' })
    await t.rejects(changePlatformRates(sql, { roadFactor: 1e9 }), { name: 'PlatformRatesError', field: 'roadFactor', message: 'roadFactor must be a number from 1 to 3' })
    await t.rejects(changePlatformRates(sql, { baseFare: 1e12 }), { name: 'PlatformRatesError', field: 'baseFare' })
    t.equal((await changePlatformRates(sql, { maxDistanceKm: 120.5 })).maxDistanceKm, 120.5, 'the limit keeps its decimals')
    t.equal((await getPlatformRates(sql)).maxDistanceKm, 120.5)
    t.equal((await getPlatformRates(sql)).baseFare, 50_000)
  })
})
