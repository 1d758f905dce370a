import t from 'tap'
import { kmNorth, onShift } from '../../helpers/couriers.js'
import { waitForValue } from '../../helpers/processes.js'
import { ISLAND } from '../../helpers/shipments.js'
import { startStack } from '../../helpers/stack.js'

// Courier routes are rate limited per courier (DESIGN 17.1), in Redis like the business routes'
// per-key limit; location pings keep their own one-a-second gate and do not spend the budget.
const { gateway, db } = await startStack(t, { worker: false, env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } })

t.test('each courier has a budget of their own; pings do not spend it', async (t) => {
  // onShift spends one request of each courier's budget (the shift); its ping spends none.
  const first = await onShift(gateway, db.sql, 'Budget One', kmNorth(ISLAND, 1))
  const second = await onShift(gateway, db.sql, 'Budget Two', kmNorth(ISLAND, 2))
  const me = (auth: Record<string, string>) => gateway.inject({ method: 'GET', url: '/v2/courier/me', headers: auth })
  for (let i = 0; i < 2; i++) t.equal((await me(first.auth)).statusCode, 200, `request ${i + 2} of 3`)
  const limited = await me(first.auth)
  t.equal(limited.statusCode, 429, 'the fourth request in the window is refused')
  t.match(limited.json(), { statusCode: 429, path: '/v2/courier/me', message: /^Too many requests, retry in \d+ seconds$/ })
  t.ok(Number(limited.headers['retry-after']) > 0, 'with Retry-After')
  t.equal((await me(second.auth)).statusCode, 200, 'another courier has their own budget')
  // Past the one-a-second gate of the ping onShift sent, a limited courier's ping still lands.
  const ping = await waitForValue(() => gateway.inject({ method: 'POST', url: '/v2/courier/location', headers: first.auth, payload: { latitude: 6.46, longitude: 3.4 } }),
    (response) => response.statusCode !== 429, 3000, 100)
  t.equal(ping.value.statusCode, 204, 'a courier out of budget still reports where they are')
  t.notOk(ping.value.headers['ratelimit-limit'], 'pings are not counted against the budget (their own gate applies)')
  const documented = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json().paths['/courier/location'].post.responses['204'].headers
  t.same(Object.keys(documented).filter((name) => ping.value.headers[name] === undefined), [], 'every header the document gives a ping\'s 204 is sent')
})
