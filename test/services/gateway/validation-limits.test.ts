import t from 'tap'
import { seedAccount } from '../../helpers/accounts.js'
import { quoteRequest, shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

/*
 * docs/contracts.md, "Validation is linear in the input": a 1 MiB body of any shape is refused with the
 * error body, and other requests keep being served meanwhile. The gateway listens on a real port
 * and every request goes over HTTP at once, so one slow validation would hold up the quote.
 * The deadline is the generous 10 s of docs/contracts.md: the quadratic email pattern this replaces
 * held the event loop for minutes on the first body.
 */

const QUOTE = '/v2/business/order/cost'
const PLACE = '/v2/business/order'
// Just under the 1 MiB body limit, so these reach validation instead of the 413.
const SIZE = 1_040_000
const DEADLINE_MS = 10_000

interface Adversary {
  name: string
  url: string
  body: string
  status: number
  message: string
}

function adversaries(): Adversary[] {
  const fill = (n: number, unit: string) => unit.repeat(Math.floor(n / unit.length))
  const manyKeys = Array.from({ length: 80_000 }, (_, i) => `"k${i}":0`).join(',')
  const quoteFields = Object.keys(quoteRequest())
  const depth = Math.floor(SIZE / 2) - 8
  return [
    {
      name: 'an e-mail of 1 MiB of dots',
      url: PLACE,
      body: JSON.stringify([shipment({ recipient_email: `a@${fill(SIZE - 400, '.')}@` })]),
      status: 400,
      message: '[0].recipient_email must be shorter than or equal to 255 characters',
    },
    {
      name: '100 shipments with e-mails of dots',
      url: PLACE,
      body: JSON.stringify(Array.from({ length: 100 }, () => shipment({ recipient_email: `a@${fill(SIZE / 100 - 400, '.')}@` }))),
      status: 400,
      message: '[0].recipient_email must be shorter than or equal to 255 characters',
    },
    {
      name: 'an array of 130 000 small objects',
      url: PLACE,
      body: `[${fill(SIZE, '{"a":1},')}{"a":1}]`,
      status: 400,
      message: 'body must be an array of 1 to 100 shipments',
    },
    {
      name: 'a shipment with 80 000 unknown fields',
      url: PLACE,
      body: `[{${manyKeys}}]`,
      status: 400,
      message: '[0].dropoff_address should not be empty',
    },
    {
      name: 'a quote with 80 000 unknown fields',
      url: QUOTE,
      body: `{${manyKeys}}`,
      status: 400,
      message: 'pickup_address should not be empty',
    },
    {
      name: 'a quote whose every field is a huge string',
      url: QUOTE,
      body: JSON.stringify(Object.fromEntries(quoteFields.map((field) => [field, fill(SIZE / quoteFields.length - 40, 'x')]))),
      status: 400,
      message: 'pickup_address must be shorter than or equal to 500 characters',
    },
    {
      name: 'a weight of a million digits in a string',
      url: QUOTE,
      body: JSON.stringify(quoteRequest({ weight: fill(SIZE - 400, '9') })),
      status: 400,
      message: 'weight must be a number',
    },
    {
      name: 'arrays nested half a million deep',
      url: PLACE,
      body: `[${'['.repeat(depth)}${']'.repeat(depth)}]`,
      status: 400,
      message: '[0] must be a JSON object',
    },
    {
      name: 'a field holding arrays nested half a million deep',
      url: PLACE,
      body: `[{"recipient_name":${'['.repeat(depth - 20)}${']'.repeat(depth - 20)}}]`,
      status: 400,
      message: '[0].dropoff_address should not be empty',
    },
    {
      name: 'a body over the limit',
      url: PLACE,
      body: `[${fill(1_100_000, '{"a":1},')}{"a":1}]`,
      status: 413,
      message: 'Request body is larger than 1048576 bytes',
    },
  ]
}

t.test('1 MiB bodies of any shape are refused while a quote is served meanwhile', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const account = await seedAccount(db.sql)
  await gateway.listen({ port: 0, host: '127.0.0.1' })
  const address = gateway.server.address()
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const headers = { ...bearer(account.apiKey), 'content-type': 'application/json' }
  const post = async (url: string, body: string) => {
    const response = await fetch(base + url, { method: 'POST', headers, body, signal: AbortSignal.timeout(DEADLINE_MS) })
    return { status: response.status, body: await response.json() }
  }

  // Two rounds of every adversary in flight at once, then the quote behind them.
  const list = adversaries()
  const attacks = [...list, ...list].map(async (adversary) => ({ adversary, answer: await post(adversary.url, adversary.body) }))
  const quote = post(QUOTE, JSON.stringify(quoteRequest()))

  const answered = await quote
  t.equal(answered.status, 200, `the quote sent meanwhile is answered 200 within ${DEADLINE_MS / 1000} s`)
  t.type(answered.body.price, 'number')

  for (const { adversary, answer } of await Promise.all(attacks)) {
    t.equal(answer.status, adversary.status, `${adversary.name}: ${adversary.status}`)
    t.match(answer.body, { statusCode: adversary.status, path: adversary.url, message: adversary.message }, `${adversary.name}: the error body`)
  }
})
