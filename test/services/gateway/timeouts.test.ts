import { execFileSync } from 'node:child_process'
import t from 'tap'
import { gatewayServerOptions } from '../../../services/gateway/server-options.js'
import { gatewayEnv, loadConfig } from '../../../shared/config.js'
import { seedAccount } from '../../helpers/accounts.js'
import { TEST_SECRETS } from '../../helpers/db.js'
import { QUOTE, CATALOG } from '../../helpers/gateway.js'
import { startOwnRedis, startSilentServer } from '../../helpers/processes.js'
import { quoteRequest } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// docs/contracts.md, "Every wait is bounded": a call out that never answers ends in a 503 with
// the error body, never a hung request. The deadline asserted is the generous 10 s of the
// timing rule; without the timeout the request would wait forever.
t.test('pricing that accepts the connection and never answers: 503 within the pricing timeout', async (t) => {
  const silent = await startSilentServer(t)

  const { gateway, db } = await startStack(t, { worker: false, env: { PRICING_URL: silent.url, PRICING_TIMEOUT_MS: '500' } })
  const account = await seedAccount(db.sql)
  for (const [method, url, payload] of [['POST', QUOTE, quoteRequest()], ['GET', CATALOG, undefined]] as const) {
    const answer = await Promise.race([
      gateway.inject({ method, url, headers: bearer(account.apiKey), payload }),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
    ])
    t.ok(answer, `${method} ${url} is answered, not left hanging`)
    t.equal(answer?.statusCode, 503)
    t.match(answer?.json(), { statusCode: 503, path: url, message: 'Pricing is temporarily unavailable, retry shortly', request_id: String })
  }
  t.ok(silent.connections() > 0, 'the gateway did reach the silent pricing')
})

t.test('the server bounds how long a client may take to send its request', async (t) => {
  const config = loadConfig(gatewayEnv, { ...TEST_SECRETS, REQUEST_TIMEOUT_MS: '12345', PLACEMENT_TIMEOUT_MS: '3000' })
  t.equal(gatewayServerOptions(config).requestTimeout, 12345, 'fastify gets REQUEST_TIMEOUT_MS')
  t.ok(loadConfig(gatewayEnv, { ...TEST_SECRETS }).REQUEST_TIMEOUT_MS > loadConfig(gatewayEnv, { ...TEST_SECRETS }).PLACEMENT_TIMEOUT_MS, 'by default above the placement wait, so a placement answers its own 503 first')
})

// A silent dependency whose own timeout is longer than the request's: the request's bound answers.
t.test('a handler that waits past REQUEST_TIMEOUT_MS answers 503 with the error body, whatever it waits on', async (t) => {
  const silent = await startSilentServer(t)
  const { gateway, db } = await startStack(t, { worker: false, env: { PRICING_URL: silent.url, PRICING_TIMEOUT_MS: '600000', REQUEST_TIMEOUT_MS: '800', PLACEMENT_TIMEOUT_MS: '500' } })
  const account = await seedAccount(db.sql)
  const answer = await Promise.race([
    gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(account.apiKey), payload: quoteRequest() }),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
  ])
  t.ok(answer, 'answered, not left waiting for pricing')
  t.equal(answer?.statusCode, 503)
  t.match(answer?.json(), { statusCode: 503, path: QUOTE, message: 'The request took too long to answer, retry shortly', request_id: String })
  // The abandoned call to pricing ends with its connection, so the gateway can close.
  silent.hangUp()
})

// A Redis that holds its connections open and answers nothing (a partition, a frozen server):
// without a command timeout every /v2 request would wait on the rate limiter for minutes.
t.test('a black-holed Redis: quotes go on, the limiter failing open after REDIS_COMMAND_TIMEOUT_MS', async (t) => {
  const redis = await startOwnRedis(t)
  const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url, RATE_LIMIT_MAX: '1000', REDIS_COMMAND_TIMEOUT_MS: '300' } })
  const account = await seedAccount(db.sql)
  const quote = () => Promise.race([
    gateway.inject({ method: 'POST', url: QUOTE, headers: bearer(account.apiKey), payload: quoteRequest() }),
    new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000).unref()),
  ])
  t.equal((await quote())?.statusCode, 200, 'served while Redis answers')
  const pid = Number(/process_id:(\d+)/.exec(execFileSync('redis-cli', ['-p', String(redis.port), 'info', 'server'], { encoding: 'utf8' }))?.[1])
  process.kill(pid, 'SIGSTOP')
  t.teardown(() => { try { process.kill(pid, 'SIGCONT') } catch {} })
  const answer = await quote()
  t.ok(answer, 'answered while Redis is silent')
  t.equal(answer?.statusCode, 200)
  t.match(answer?.json(), { price: Number })
})
