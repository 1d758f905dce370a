import { execFileSync } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import t, { type Test } from 'tap'
import { findActiveKeyByHash } from '../../../shared/db/api-keys.js'
import { createBusiness } from '../../../shared/db/businesses.js'
import { createWallet } from '../../../shared/db/wallets.js'
import { useTestDb } from '../../helpers/db.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { projectRoot } from '../../helpers/processes.js'
import { newUuid } from '../../../shared/ids.js'
import { demoCardText, positionOf, spoiled } from '../../helpers/card-text.js'
import { secretHash } from '../../../shared/secret-hash.js'

const square = (lng: number, lat: number) => [[lng, lat], [lng + 0.1, lat], [lng + 0.1, lat + 0.1], [lng, lat + 0.1], [lng, lat]]
const card = (changes: { bands?: [number, number][]; priceTo?: string } = {}) => ({
  name: 'Test Card',
  currency: 'NGN',
  zones: [{ name: 'Alpha', polygon: square(3.3, 6.4) }, { name: 'Beta', polygon: square(3.4, 6.4) }],
  options: [
    ...(changes.bands ?? [[0, 5], [5, 10]]).map(([min, max]) => ({
      vehicle_type: 'bike', label: `${min} to ${max} kg`, min_weight_kg: min, max_weight_kg: max,
      prices: [{ from: 'Alpha', to: changes.priceTo ?? 'Beta', price: 1500 + max }],
    })),
    { vehicle_type: 'truck', label: '5-tonne truck', max_weight_kg: 5000, prices: [{ from: 'Alpha', to: 'Alpha', price: 45000.5 }] },
  ],
})

t.test('operator CLI: rate cards, platform rates and the demo seed', async (t) => {
  const db = await useTestDb(t)
  const { sql } = db
  // The demo card as an operator might have written it, with a mistake out of shape and three against the rules.
  const manyText = spoiled(demoCardText(), [
    ['"name": "Lagos Demo"', '"name": "Many Mistakes"'],
    ['{"from":"Island","to":"Lekki","price":2500}', '{"from":"Island","to":"Lekki","price":-2500}'],
    ['{"from":"Island","to":"Ikeja","price":4900}', '{"from":"Island","to":"Ajah","price":4900}'],
    ['"label":"10 to 20 kg","min_weight_kg":10', '"label":"10 to 20 kg","min_weight_kg":12'],
    ['{"from":"Lekki","to":"Lekki","price":2100}', '{"from":"Lekki","to":"Lekki","price":2100.005}'],
  ])
  const dir = t.testdir({
    'many.json': manyText,
    // 80 prices with 3 decimals, and 40 of their zones unknown.
    'too-many.json': demoCardText().replace(/"price":(\d+)/g, '"price":$1.125').replaceAll('"to":"Ikeja"', '"to":"Ikeja2"').replaceAll('"from":"Ikeja"', '"from":"Ikeja2"'),
    'not-json.json': spoiled(demoCardText(), [['"currency": "NGN",', '"currency": "NGN"']]),
    'card.json': JSON.stringify(card()),
    'relative.json': JSON.stringify({ ...card(), name: 'Relative Card' }),
    'broken.json': '{"name": "Test Card", "zones": [',
    'overlap.json': JSON.stringify(card({ bands: [[0, 5], [4, 10]] })),
    'unknown-zone.json': JSON.stringify(card({ priceTo: 'Gamma' })),
    // A valid card padded with spaces to the console's upload limit exactly, and one byte past it.
    'at-limit.json': JSON.stringify({ ...card(), name: 'Padded Card' }).padEnd(2 * 1024 * 1024, ' '),
    'past-limit.json': JSON.stringify({ ...card(), name: 'Padded Card' }).padEnd(2 * 1024 * 1024 + 1, ' '),
  })
  const cardRows = async () => {
    const [row] = await sql`select (select count(*)::int from rate_cards) as cards, (select count(*)::int from rate_card_versions) as versions,
      (select count(*)::int from options) as options, (select count(*)::int from zone_prices) as prices`
    return row
  }
  const refuses = async (t: Test, args: string[], message: RegExp, unchanged: () => Promise<unknown>, lines = 1) => {
    const before = await unchanged()
    const run = await runOperatorCli(db, args)
    t.not(run.code, 0, `${args.join(' ')} exits non-zero`)
    t.equal(run.stdout, '')
    t.match(run.stderr.trim(), message)
    t.equal(run.stderr.trim().split('\n').length, lines, lines === 1 ? 'one line on stderr' : `${lines} lines on stderr`)
    t.same(await unchanged(), before, 'nothing changed')
    return run.stderr.trim().split('\n')
  }

  const first = await runOperatorCli(db, ['ratecard:import', '--file', `${dir}/card.json`])
  t.equal(first.code, 0, first.stderr)
  t.equal(first.json.version, 1)
  t.same(first.json.options.map((option: { vehicle_type: string; label: string }) => [option.vehicle_type, option.label]), [['bike', '0 to 5 kg'], ['bike', '5 to 10 kg'], ['truck', '5-tonne truck']])
  t.match(first.json.options[0].id, /^opt_[0-9A-Z]{12}$/)
  const rateCardId: string = first.json.rate_card_id
  const [truckPrice] = await sql`select price from zone_prices where option_id = ${first.json.options[2].id}`
  t.equal(truckPrice.price, 4500050, 'prices are stored in kobo')

  t.test('importing the same name makes version 2 with new option ids', async (t) => {
    const second = await runOperatorCli(db, ['ratecard:import', '--file', `${dir}/card.json`])
    t.equal(second.json.rate_card_id, rateCardId)
    t.equal(second.json.version, 2)
    const ids = new Set(first.json.options.map((option: { id: string }) => option.id))
    t.notOk(second.json.options.some((option: { id: string }) => ids.has(option.id)))
  })

  t.test('bad card files are refused and write nothing', async (t) => {
    await refuses(t, ['ratecard:import', '--file', `${dir}/broken.json`], /^.*broken\.json:1:33: not valid JSON: the file ends before an array is closed: a '\]' is missing$/, cardRows)
    await refuses(t, ['ratecard:import', '--file', `${dir}/overlap.json`], /overlap\.json:1:\d+: bike bands 0 to 5 kg and 4 to 10 kg overlap/, cardRows)
    const unknown = await refuses(t, ['ratecard:import', '--file', `${dir}/unknown-zone.json`], /unknown zone Gamma/, cardRows, 2)
    t.match(unknown, [/options\[0\] \(0 to 5 kg\)\.prices\[0\]\.to: unknown zone Gamma$/, /options\[1\] \(5 to 10 kg\)\.prices\[0\]\.to: unknown zone Gamma$/], 'both prices that name it')
  })

  t.test('a file with many problems: each on a line of its own, at its line and column in the file', async (t) => {
    const file = `${dir}/many.json`
    const lines = await refuses(t, ['ratecard:import', '--file', file], /unknown zone Ajah/, cardRows, 4)
    const at = (needle: string) => { const { line, column } = positionOf(manyText, needle); return `${file}:${line}:${column}: ` }
    t.same(lines, [
      `${at('"price":-2500')}options[0].prices[1].price: must not be negative`,
      `${at('"to":"Ajah"')}options[1] (5 to 10 kg).prices[3].to: unknown zone Ajah`,
      `${at('"price":2100.005')}options[1] (5 to 10 kg).prices[5].price: 2100.005 has more than 2 decimals`,
      `${at('"min_weight_kg":12')}bike bands 5 to 10 kg and 10 to 20 kg leave a gap from 10 kg to 12 kg`,
    ])
    t.match(lines[1], /many\.json:36:26: /, 'line 36 of the file as written')
    const tooMany = await refuses(t, ['ratecard:import', '--file', `${dir}/too-many.json`], /has more than 2 decimals/, cardRows, 101)
    t.match(tooMany.slice(0, 100), Array.from({ length: 100 }, () => /too-many\.json:\d+:\d+: options\[\d\] \(.*\)\.prices\[\d+\]\.(from|to|price): (unknown zone Ikeja2|\d+\.125 has more than 2 decimals)$/))
    t.equal(tooMany[100], `${dir}/too-many.json: and 20 more problems`)
    await refuses(t, ['ratecard:import', '--file', `${dir}/not-json.json`], /not-json\.json:4:3: not valid JSON: expected ',' or '}', found '"zones"'$/, cardRows)
    await refuses(t, ['ratecard:import', '--file', `${dir}/missing.json`], /^no file at \/.*\/missing\.json$/, cardRows)
  })

  t.test('a file is read up to 2 MiB, the console\'s limit: one at the limit imports, one past it or an endless pipe is refused', async (t) => {
    const atLimit = await runOperatorCli(db, ['ratecard:import', '--file', `${dir}/at-limit.json`])
    t.equal(atLimit.code, 0, atLimit.stderr)
    t.match(atLimit.json, { version: 1, options: { length: 3 } }, 'exactly 2 MiB is a card')
    await refuses(t, ['ratecard:import', '--file', `${dir}/past-limit.json`], /^.*past-limit\.json is over 2 MiB \(2097152 bytes\), the most a rate-card file may be$/, cardRows)
    // A pipe has no size to look at first (`--file <(…)`, /dev/stdin): its reading stops at the limit.
    const pipe = `${dir}/pipe`
    execFileSync('mkfifo', [pipe])
    const writer = createWriteStream(pipe)
    writer.on('error', () => {}) // EPIPE once the CLI has read its fill and closed its end
    const endless = () => { while (writer.write(Buffer.alloc(64 * 1024, 0x20))); writer.once('drain', endless) }
    writer.once('open', endless)
    await refuses(t, ['ratecard:import', '--file', pipe], /^.*pipe is over 2 MiB \(2097152 bytes\), the most a rate-card file may be$/, cardRows)
    writer.destroy()
  })

  t.test('a relative --file is read from where the operator typed the command (npm\'s INIT_CWD), not the project root', async (t) => {
    // `npm run admin` runs the CLI in the project root and keeps the caller's directory in INIT_CWD.
    const relative = await runOperatorCli(db, ['ratecard:import', '--file', 'relative.json'], { INIT_CWD: dir })
    t.equal(relative.code, 0, relative.stderr)
    t.match(relative.json, { version: 1, options: { length: 3 } }, 'the file beside the operator is imported')
    const run = await runOperatorCli(db, ['ratecard:import', '--file', 'nowhere.json'], { INIT_CWD: dir })
    t.equal(run.stderr, `no file at ${dir}/nowhere.json\n`, 'a missing file is named where it was looked for')
    // Started without npm (no INIT_CWD), a relative path is the process's own directory.
    const bare = await runOperatorCli(db, ['ratecard:import', '--file', 'relative.json'], { INIT_CWD: '' })
    t.equal(bare.stderr, `no file at ${projectRoot}/relative.json\n`)
  })

  t.test('enable is idempotent and replaces; disable clears', async (t) => {
    const business = await createBusiness(sql, newUuid(), { name: 'Shop', phone: '1', address: 'Marina, Lagos', state: 'Lagos', currency: 'NGN' })
    await createWallet(sql, business.id, 'NGN')
    const cardOf = async () => (await sql`select rate_card_id from businesses where id = ${business.id}`)[0].rateCardId
    for (let run = 0; run < 2; run++) {
      const enabled = await runOperatorCli(db, ['ratecard:enable', '--business', business.id, '--rate-card', rateCardId])
      t.same(enabled.json, { business_id: business.id, rate_card_id: rateCardId }, `enable run ${run + 1}`)
    }
    t.equal(await cardOf(), rateCardId)
    await refuses(t, ['ratecard:enable', '--business', business.id, '--rate-card', '00000000-0000-4000-8000-000000000000'], /rate card .* does not exist/, cardOf)
    await refuses(t, ['ratecard:enable', '--business', '00000000-0000-4000-8000-000000000000', '--rate-card', rateCardId], /business .* does not exist/, cardOf)
    await refuses(t, ['ratecard:enable', '--business', business.id, '--rate-card', 'Test Card'], /--rate-card must be a UUID/, cardOf)
    const disabled = await runOperatorCli(db, ['ratecard:disable', '--business', business.id])
    t.same(disabled.json, { business_id: business.id, rate_card_id: null })
    t.equal(await cardOf(), null)
    t.same((await runOperatorCli(db, ['ratecard:disable', '--business', business.id])).json, disabled.json, 'a repeat disable succeeds')
    const audited = await sql`select action, before, after from audit_log where business_id = ${business.id} and action = 'ratecard.disable'`
    t.same(audited, [{ action: 'ratecard.disable', before: { rate_card_id: rateCardId, name: audited[0]?.before?.name }, after: { rate_card_id: null } }], 'audited once, with the card it took away')
  })

  t.test('platform-rates:set changes only the rates named', async (t) => {
    const set = await runOperatorCli(db, ['platform-rates:set', '--base-fare', '600', '--per-km', '0', '--road-factor', '1.4'])
    t.equal(set.code, 0, set.stderr)
    t.same(set.json, { base_fare: 600, per_km: 0, per_kg: 50, min_fare: 1000, road_factor: 1.4, max_distance_km: 80, cancel_free_window_s: 120, cancellation_fee_percent: 25, bike_speed_kmh: 25, car_speed_kmh: 30, bus_van_speed_kmh: 25, truck_speed_kmh: 20, currency: 'NGN' })
    const stored = async () => (await sql`select base_fare, per_km, per_kg, min_fare, road_factor::float as road_factor from platform_rates`)[0]
    t.same(await stored(), { baseFare: 60000, perKm: 0, perKg: 5000, minFare: 100000, roadFactor: 1.4 })
    await refuses(t, ['platform-rates:set', '--base-fare', '700', '--per-kg', '12.345'], /--per-kg must be a non-negative amount .* at most 2 decimals/, stored)
    await refuses(t, ['platform-rates:set', '--road-factor', '0.9'], /--road-factor must be a number from 1 to 3/, stored)
    await refuses(t, ['platform-rates:set', '--per-km', '-1'], /^--per-km must be a non-negative amount .*, got '-1'$/, stored)
    await refuses(t, ['platform-rates:set', '--road-factor', '-1.5', '--base-fare', '700'], /^--road-factor must be a number from 1 to 3, got '-1.5'$/, stored)
    await refuses(t, ['platform-rates:set', '--road-factor', '1e9'], /^--road-factor must be a number from 1 to 3, got '1e9'$/, stored)
    await refuses(t, ['platform-rates:set', '--min-fare', '1000000.01'], /^--min-fare must be a non-negative amount up to 1000000 with at most 2 decimals, got '1000000.01'$/, stored)
  })

  t.test('platform-rates:set sets each vehicle\'s ETA speed (DESIGN 14), within 5 to 120 km/h', async (t) => {
    const set = await runOperatorCli(db, ['platform-rates:set', '--bike-speed-kmh', '15', '--truck-speed-kmh', '18.5'])
    t.equal(set.code, 0, set.stderr)
    t.match(set.json, { bike_speed_kmh: 15, car_speed_kmh: 30, bus_van_speed_kmh: 25, truck_speed_kmh: 18.5 }, 'the others stay')
    const stored = async () => (await sql`select bike_speed_kmh, truck_speed_kmh from platform_rates`)[0]
    t.same(await stored(), { bikeSpeedKmh: 15, truckSpeedKmh: 18.5 })
    await refuses(t, ['platform-rates:set', '--bike-speed-kmh', '500'], /^--bike-speed-kmh must be a speed from 5 to 120 km\/h, got '500'$/, stored)
    await refuses(t, ['platform-rates:set', '--car-speed-kmh', '0'], /^--car-speed-kmh must be a speed from 5 to 120 km\/h, got '0'$/, stored)
  })

  t.test('platform-rates:set --max-distance-km sets the limit of local delivery', async (t) => {
    const set = await runOperatorCli(db, ['platform-rates:set', '--max-distance-km', '2000'])
    t.equal(set.code, 0, set.stderr)
    t.match(set.json, { max_distance_km: 2000, road_factor: 1.4 }, 'the other rates stay')
    const stored = async () => (await sql`select max_distance_km::float as max_distance_km from platform_rates`)[0]
    t.same(await stored(), { maxDistanceKm: 2000 })
    t.match((await runOperatorCli(db, ['platform-rates:set'])).json, { max_distance_km: 2000 }, 'shown without flags')
    await refuses(t, ['platform-rates:set', '--max-distance-km', '0'], /--max-distance-km must be a number of km from 1 to 2000/, stored)
    await refuses(t, ['platform-rates:set', '--max-distance-km', 'far'], /--max-distance-km must be a number/, stored)
  })

  t.test('platform-rates:set --cancel-free-window-s and --cancellation-fee-percent set the cancellation terms', async (t) => {
    const set = await runOperatorCli(db, ['platform-rates:set', '--cancel-free-window-s', '300', '--cancellation-fee-percent', '12.5'])
    t.equal(set.code, 0, set.stderr)
    t.match(set.json, { cancel_free_window_s: 300, cancellation_fee_percent: 12.5, max_distance_km: 2000 }, 'the other rates stay')
    const stored = async () => (await sql`select cancel_free_window_s, cancellation_fee_percent::float as cancellation_fee_percent from platform_rates`)[0]
    t.same(await stored(), { cancelFreeWindowS: 300, cancellationFeePercent: 12.5 })
    await refuses(t, ['platform-rates:set', '--cancel-free-window-s', '1.5'], /--cancel-free-window-s must be a whole number of seconds/, stored)
    await refuses(t, ['platform-rates:set', '--cancel-free-window-s', '86401'], /--cancel-free-window-s must be a whole number of seconds from 0 to 86400/, stored)
    await refuses(t, ['platform-rates:set', '--cancellation-fee-percent', '100.5'], /--cancellation-fee-percent must be a number from 0 to 100/, stored)
    await refuses(t, ['platform-rates:set', '--cancellation-fee-percent', '12.345'], /--cancellation-fee-percent must be a number from 0 to 100 with at most 2 decimals/, stored)
  })

  t.test('demo:seed reuses the demo business and issues a fresh key each run', async (t) => {
    const seeds = []
    for (let run = 0; run < 2; run++) {
      const seed = await runOperatorCli(db, ['demo:seed'])
      t.equal(seed.code, 0, seed.stderr)
      seeds.push(seed.json)
    }
    const [one, two] = seeds
    t.same(Object.keys(one).sort(), ['api_key', 'balance', 'business_id', 'console_users', 'currency', 'rate_card_id', 'test_api_key'])
    // The demo console users: a fresh one-time link each run until their password is set.
    t.same(one.console_users.map((user: { email: string; role: string }) => [user.email, user.role]), [['operator@example.com', 'operator'], ['demo@example.com', 'business']])
    t.match(one.console_users[0].set_password_url, /^http:\/\/localhost:3004\/console\/set-password\?token=[\w-]{43}$/)
    t.not(two.console_users[1].set_password_url, one.console_users[1].set_password_url, 'a new link on the next run while no password is set')
    const [business] = await sql`select business_id from console_users where email = 'demo@example.com'`
    t.equal(business.businessId, one.business_id, 'the demo user belongs to the demo business')
    t.match(one.test_api_key, /^ck_test_[0-9A-Za-z]{32}$/, 'and a sandbox key')
    t.equal(two.business_id, one.business_id)
    t.equal(two.rate_card_id, one.rate_card_id)
    t.not(two.api_key, one.api_key)
    t.same([one.balance, two.balance, two.currency], [10000000, 10000000, 'NGN'], 'the wallet is topped up once')
    for (const seed of seeds) {
      t.match(await findActiveKeyByHash(sql, secretHash(seed.api_key)), { businessId: one.business_id, scopes: ['orders:write', 'webhooks:write'] }, 'both keys stay valid')
    }
    const [demo] = await sql`select
      (select count(*)::int from businesses where is_demo) as businesses,
      (select count(*)::int from rate_card_versions where rate_card_id = ${one.rate_card_id}) as versions,
      (select count(*)::int from ledger_entries where business_id = ${one.business_id} and livemode) as credits,
      (select count(*)::int from ledger_entries where business_id = ${one.business_id} and not livemode) as test_credits,
      (select rate_card_id from businesses where is_demo) as enabled`
    t.same(demo, { businesses: 1, versions: 1, credits: 1, testCredits: 1, enabled: one.rate_card_id }, 'each wallet, live and test, is funded once')
  })
})
