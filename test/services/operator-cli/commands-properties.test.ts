import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { demoRateCardPath } from '../../../shared/accounts/demo-seed.js'
import { createRedis } from '../../../shared/redis.js'
import { announce } from '../../../services/operator-cli/announce.js'
import type { OperatorContext } from '../../../services/operator-cli/command.js'
import { commands } from '../../../services/operator-cli/commands/index.js'
import { OperatorInputError } from '../../../services/operator-cli/operator-input-error.js'
import { seedAccount } from '../../helpers/accounts.js'
import { anyText, nearly, someOf } from '../../helpers/arbitraries.js'
import { seedOrder } from '../../helpers/console.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { useTestDb } from '../../helpers/db.js'

/*
 * Every operator command, run in this process as main() runs it (its flags' check, then its
 * work in the database), with flags of any value: real ids of businesses, orders, couriers, keys,
 * users and rate cards, and numbers, phones, e-mails, files and text of any shape. A command
 * either answers or refuses with an OperatorInputError, which main() prints as the contract's one
 * line; anything else would reach the operator as "failed: …", the line kept for faults. The
 * wallets still equal their ledgers at the end (useTestDb checks).
 */

const RUNS = 25

const db = await useTestDb(t)
const { sql, config } = db
const redis = createRedis(config)
t.teardown(() => redis.disconnect())
const context: OperatorContext = { sql, config, actor: 'cli:fuzz', redis: async () => redis, announce: (message) => announce(redis, config.QUEUE_PREFIX, message) }

const files = mkdtempSync(path.join(tmpdir(), 'cli-fuzz-'))
t.teardown(() => rmSync(files, { recursive: true, force: true }))
const junkCard = path.join(files, 'junk.json')
writeFileSync(junkCard, JSON.stringify({ name: 'Junk', zones: [{ name: 'x', polygon: [[0, 0]] }], options: 'none' }))
const emptyFile = path.join(files, 'empty.json')
writeFileSync(emptyFile, '')

const account = await seedAccount(db.sql, { balance: 5_000, scopes: ['orders:write'] })
const other = await seedAccount(db.sql, { name: 'Other Stores' })
const orders = [await seedOrder(sql, account.businessId), await seedOrder(sql, account.businessId), await seedOrder(sql, other.businessId, false)]
const couriers = [(await createdCourier(sql, { name: 'Fuzz Rider' })).courier.id, (await createdCourier(sql, { name: 'Second Rider' })).courier.id]
const column = async (query: Promise<{ value: string }[]>) => (await query).map((row) => row.value)
const keys = await column(sql`select id::text as value from api_keys`)
const cards = await column(sql`select id::text as value from rate_cards`)

// Values by what a flag names; any flag also gets junk and every other real id.
const byFlag: Record<string, string[]> = {
  business: [account.businessId, other.businessId],
  order: orders,
  courier: couriers,
  'key-id': keys,
  'rate-card': cards,
  file: [demoRateCardPath, junkCard, emptyFile, files, path.join(files, 'missing.json')],
  amount: ['100', '0', '-5', '0.001', '1e9', '99999999999999999999', 'NaN', '5,000'],
  phone: ['+2348031112222', '08031112222', '+1', '++234', 'phone'],
  email: ['ops@fuzz.example', 'not-an-email', 'a@b', ''],
  to: ['assigned', 'picked_up', 'delivered', 'failed', 'returned', 'created', 'cancelled', 'flying'],
  mode: ['live', 'test', 'both', ''],
  role: ['operator', 'business', 'admin'],
  scopes: ['orders:write', 'orders:read,webhooks:write', 'orders:write,,', 'root'],
  'vehicle-type': ['bike', 'car', 'van', 'truck', 'boat'],
}
const realIds = [...Object.values(byFlag).slice(0, 5).flat()]
const text = anyText(['', '-1', '0', '6.45', '3.4', '91', '-181', '1e308', ...realIds])
const flagValue = (name: string) => fc.oneof(...(byFlag[name] ? [{ weight: 3, arbitrary: fc.constantFrom(...byFlag[name]) }] : []), text)

// A valid set of flags for the commands that take many, varied a flag or two at a time, so runs
// get past the flags' check to the database.
const SEEDS: Record<string, Record<string, string>> = {
  'business:create': { name: 'Fuzz Foods', phone: '+2348010000001', address: '1 Marina, Lagos Island', state: 'Lagos', lat: '6.45', lng: '3.4', currency: 'NGN' },
  'courier:create': { name: 'Fuzz Rider', phone: '+2348031113333', 'vehicle-type': 'bike', 'vehicle-plate': 'KJA-12', 'max-weight-kg': '20' },
  'order:advance': { order: orders[0], to: 'assigned', courier: couriers[0] },
  'wallet:credit': { business: account.businessId, amount: '100', reference: 'fuzz' },
  'user:create': { email: 'new@fuzz.example', role: 'business', business: account.businessId },
}

for (const [name, load] of Object.entries(commands)) {
  t.test(`${name}: any flags get an answer or one clear refusal`, async (t) => {
    const command = await load()
    const flagNames = Object.keys(command.options)
    const seed = SEEDS[name]
    const flags = fc.oneof(
      someOf(flagNames, flagValue),
      ...(seed ? [nearly(seed, Object.keys(seed), text, 2)] : []),
    )
    const outcomes = { answered: 0, refused: 0 }
    await fc.assert(fc.asyncProperty(flags, async (chosen) => {
      try {
        await command.prepare(chosen, config)(context)
        outcomes.answered++
      } catch (err) {
        if (!(err instanceof OperatorInputError)) throw new Error(`${name} ${JSON.stringify(chosen).slice(0, 400)} failed with ${err instanceof Error ? err.stack : String(err)}`)
        outcomes.refused++
      }
    }), { numRuns: RUNS })
    t.pass(`${RUNS} runs: ${JSON.stringify(outcomes)}`)
  })
}
