import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { gatewayEnv, loadConfig } from '../../../shared/config.js'
import gatewayApp from '../../../services/gateway/app.js'
import { createKeyCache } from '../../../services/gateway/auth.js'
import { createCourierTokenCache } from '../../../services/gateway/courier-auth.js'
import { createdCourier } from '../../helpers/courier-accounts.js'
import { gatewayServerOptions } from '../../../services/gateway/server-options.js'
import { seedAccount } from '../../helpers/accounts.js'
import { freePort, startOwnRedis, waitFor } from '../../helpers/processes.js'
import { quoteRequest } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { TEST_SECRETS, useTestDb } from '../../helpers/db.js'
import { checkResponsesAgainstDocument } from '../../helpers/openapi-responses.js'
import { secretHash } from '../../../shared/secret-hash.js'

/*
 * docs/contracts.md, "Cheap refusals first": a malformed bearer value is a 401 without a Postgres query,
 * and 401s are limited per client address (AUTH_FAILURE_LIMIT) with the 429 body, while a valid
 * key from that address keeps working. TRUST_PROXY decides whether X-Forwarded-For names the client.
 */

const QUOTE = '/v2/business/order/cost'
const WELL_SHAPED_UNKNOWN = 'ck_live_0000000000000000000000000000zzzz'
const MALFORMED = ['ck_live_short', 'ck_prod_00000000000000000000000000000000', `ck_live_${'0'.repeat(31)}!`, `ck_live_${'a'.repeat(10_000)}`, 'x'.repeat(8000)]
// The gateways whose Postgres is out of reach still count failures in Redis: on the file's own
// queue prefix and test Redis, never the default `{courier}` a dev stack uses, nor a prefix that
// a later run with the same pid would find its counts under. Each test counts from its own addresses.
const { env: fileEnv } = await useTestDb(t)
const OWN_REDIS = { REDIS_URL: fileEnv.REDIS_URL, QUEUE_PREFIX: fileEnv.QUEUE_PREFIX }

/**
 * A gateway of its own on the file's schema and queue prefix. It is used once its Redis client
 * is connected: before that the limit fails open, as it does when Redis is down.
 */
async function gatewayWith(t: Test, env: Record<string, string>): Promise<FastifyInstance> {
  const config = loadConfig(gatewayEnv, { RATE_LIMIT_MAX: '0', ...TEST_SECRETS, ...env })
  const gateway = Fastify({ ...gatewayServerOptions(config), logger: false })
  checkResponsesAgainstDocument(gateway)
  await gateway.register(gatewayApp, { config })
  await gateway.ready()
  t.teardown(() => gateway.close())
  const redisUp = await waitFor(async () => (await gateway.inject({ method: 'GET', url: '/readyz' })).json().redis === true, 10_000)
  t.ok(redisUp, 'the gateway reached Redis')
  return gateway
}

function quote(gateway: FastifyInstance, authorization: string, from: { ip: string; forwardedFor?: string }) {
  const headers: Record<string, string> = { authorization, 'content-type': 'application/json' }
  if (from.forwardedFor) headers['x-forwarded-for'] = from.forwardedFor
  return gateway.inject({ method: 'POST', url: QUOTE, remoteAddress: from.ip, headers, payload: JSON.stringify(quoteRequest()) })
}

function assertRefusal(t: Test, response: LightMyRequestResponse, status: number, message: string | RegExp) {
  t.equal(response.statusCode, status, `${status}: ${response.body}`)
  t.match(response.json(), { statusCode: status, path: QUOTE, message })
}

t.test('a malformed key is refused without Postgres; a well-shaped one needs it', async (t) => {
  // Postgres out of reach: only a request that queries it can tell, by answering 503.
  const gateway = await gatewayWith(t, { DATABASE_URL: `postgres://root@127.0.0.1:${await freePort()}/nowhere`, LOG_LEVEL: 'silent', AUTH_FAILURE_LIMIT: '0', ...OWN_REDIS })
  const from = { ip: '10.1.0.1' }
  for (const value of MALFORMED) assertRefusal(t, await quote(gateway, `Bearer ${value}`, from), 401, 'Invalid API key')
  assertRefusal(t, await quote(gateway, 'Basic abc', from), 401, 'Invalid API key')
  assertRefusal(t, await quote(gateway, `Bearer ${WELL_SHAPED_UNKNOWN}`, from), 503, 'Service temporarily unavailable, retry shortly')
})

t.test('past the limit, a key that is not valid is a 429, even while Postgres is out of reach', async (t) => {
  // Postgres out of reach: a request that queried it would answer 503.
  const gateway = await gatewayWith(t, { DATABASE_URL: `postgres://root@127.0.0.1:${await freePort()}/nowhere`, LOG_LEVEL: 'silent', AUTH_FAILURE_LIMIT: '2', ...OWN_REDIS })
  const from = { ip: '10.9.0.1' }
  for (const value of [MALFORMED[0], MALFORMED[1], MALFORMED[2]]) await quote(gateway, `Bearer ${value}`, from)
  for (let i = 0; i < 3; i++) assertRefusal(t, await quote(gateway, `Bearer ck_live_${String(i).repeat(32)}`, from), 429, /^Too many requests, retry in \d+ seconds$/)
  assertRefusal(t, await quote(gateway, `Bearer ${WELL_SHAPED_UNKNOWN}`, { ip: '10.9.0.2' }), 503, 'Service temporarily unavailable, retry shortly')
})

t.test('courier tokens as API keys: past the limit one not held is a 429 even while Postgres is out of reach, and an unknown one is looked up once', async (t) => {
  const gateway = await gatewayWith(t, { DATABASE_URL: `postgres://root@127.0.0.1:${await freePort()}/nowhere`, LOG_LEVEL: 'silent', AUTH_FAILURE_LIMIT: '2', ...OWN_REDIS })
  const me = (token: string, ip: string) => gateway.inject({ method: 'GET', url: '/v2/courier/me', remoteAddress: ip, headers: { authorization: `Bearer ${token}` } })
  for (const token of ['cc_live_short', 'cc_live_short', 'cc_live_short']) await me(token, '10.10.0.1')
  for (let i = 0; i < 3; i++) {
    const refused = await me(`cc_live_${String(i).repeat(32)}`, '10.10.0.1')
    t.equal(refused.statusCode, 429, refused.body)
    t.match(refused.json(), { statusCode: 429, path: '/v2/courier/me', message: /^Too many requests, retry in \d+ seconds$/ })
  }
  t.equal((await me(`cc_live_${'7'.repeat(32)}`, '10.10.0.2')).statusCode, 503, 'under the limit the token is looked up: Postgres is out of reach')

  const { db } = await startStack(t, { worker: false })
  const tokens = createCourierTokenCache(db.sql, 60_000)
  const unknownHash = secretHash(`cc_live_${'8'.repeat(32)}`)
  t.equal(tokens.held(unknownHash), undefined, 'not held before it is sent')
  t.equal(await tokens.find(unknownHash), null)
  t.equal(tokens.held(unknownHash), null, 'then held as unknown: sent again, it costs no query')

  // An invalidation drops only what changed: the other couriers online stay held.
  const [ada, bola] = [await createdCourier(db.sql, { name: 'Ada Held' }), await createdCourier(db.sql, { name: 'Bola Held' })]
  const [adaHash, bolaHash] = [secretHash(ada.token), secretHash(bola.token)]
  for (const hash of [adaHash, bolaHash]) t.ok(await tokens.find(hash), 'a valid token is found')
  tokens.drop([adaHash])
  t.equal(tokens.held(adaHash), undefined, "a revoked token's hash is forgotten")
  t.match(tokens.held(bolaHash), { id: bola.courier.id }, 'another courier stays held')
  t.ok(await tokens.find(adaHash))
  tokens.dropWhere((courier) => courier.id === bola.courier.id)
  t.equal(tokens.held(bolaHash), undefined, 'a changed courier is forgotten')
  t.match(tokens.held(adaHash), { id: ada.courier.id }, 'and only them')
})

t.test('unknown keys are held apart from valid ones: a flood of them never evicts a valid key', async (t) => {
  const { db } = await startStack(t, { worker: false })
  const account = await seedAccount(db.sql)
  const keys = createKeyCache(db.sql, 60_000, { valid: 3, unknown: 3 })
  const validHash = secretHash(account.apiKey)
  t.match(await keys.find(validHash), { businessId: account.businessId })
  for (let i = 0; i < 10; i++) t.equal(await keys.find(secretHash(`ck_live_${String(i).repeat(32)}`)), null)
  t.match(keys.held(validHash), { businessId: account.businessId }, 'the valid key is still held after ten unknown ones')
  t.equal(keys.held(secretHash(`ck_live_${'9'.repeat(32)}`)), null, 'the latest unknown key is remembered as unknown')
})

t.test('401s per client address are limited, and only they', async (t) => {
  const { db, pricing } = await startStack(t, { worker: false })
  const account = await seedAccount(db.sql)
  const address = pricing.server.address()
  const env = { ...db.env, PRICING_URL: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` }
  const limited = await gatewayWith(t, { ...env, AUTH_FAILURE_LIMIT: '3' })

  t.test('past the limit a would-be 401 is a 429; a valid key from that address still works', async (t) => {
    const from = { ip: '10.2.0.1' }
    t.equal((await quote(limited, bearer(account.apiKey).authorization, from)).statusCode, 200, 'the valid key is used before the refusals')
    for (const value of [MALFORMED[0], WELL_SHAPED_UNKNOWN, MALFORMED[1]]) assertRefusal(t, await quote(limited, `Bearer ${value}`, from), 401, 'Invalid API key')
    for (const value of [MALFORMED[2], WELL_SHAPED_UNKNOWN]) {
      const refused = await quote(limited, `Bearer ${value}`, from)
      assertRefusal(t, refused, 429, /^Too many requests, retry in \d+ seconds$/)
      const seconds = Number(refused.headers['retry-after'])
      t.ok(seconds >= 1 && seconds <= 60, `Retry-After ${refused.headers['retry-after']}`)
      t.equal(refused.json().message, `Too many requests, retry in ${seconds} seconds`, 'the body names the same wait as Retry-After')
    }
    const valid = await quote(limited, bearer(account.apiKey).authorization, from)
    t.equal(valid.statusCode, 200, `a valid key from the same address: ${valid.body}`)
    assertRefusal(t, await quote(limited, `Bearer ${WELL_SHAPED_UNKNOWN}`, { ip: '10.2.0.2' }), 401, 'Invalid API key')
  })

  t.test('past the limit, a valid key the gateway does not hold yet still works (a restart, another replica)', async (t) => {
    const from = { ip: '10.2.1.1' }
    const fresh = await gatewayWith(t, { ...env, AUTH_FAILURE_LIMIT: '3' })
    for (let i = 0; i < 4; i++) await quote(fresh, `Bearer ${WELL_SHAPED_UNKNOWN}`, from)
    assertRefusal(t, await quote(fresh, `Bearer ${WELL_SHAPED_UNKNOWN}`, from), 429, /^Too many requests/)
    const valid = await quote(limited, bearer(account.apiKey).authorization, from)
    t.equal(valid.statusCode, 200, `a valid key first seen by this gateway from an address past its limit: ${valid.body}`)
    const onFresh = await quote(fresh, bearer(account.apiKey).authorization, from)
    t.equal(onFresh.statusCode, 200, 'and on the gateway that counted the failures')
  })

  t.test('replicas share the count', async (t) => {
    const from = { ip: '10.3.0.1' }
    const other = await gatewayWith(t, { ...env, AUTH_FAILURE_LIMIT: '3' })
    for (const gateway of [limited, other, limited]) assertRefusal(t, await quote(gateway, 'Bearer nope', from), 401, 'Invalid API key')
    assertRefusal(t, await quote(other, 'Bearer nope', from), 429, /^Too many requests/)
  })

  t.test('AUTH_FAILURE_LIMIT=0 turns the limit off', async (t) => {
    const unlimited = await gatewayWith(t, { ...env, AUTH_FAILURE_LIMIT: '0' })
    const from = { ip: '10.4.0.1' }
    for (let i = 0; i < 8; i++) assertRefusal(t, await quote(unlimited, 'Bearer nope', from), 401, 'Invalid API key')
  })

  t.test('TRUST_PROXY off: X-Forwarded-For is ignored, the socket address is the client', async (t) => {
    const from = (forwardedFor: string) => ({ ip: '10.5.0.1', forwardedFor })
    for (const forwardedFor of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) assertRefusal(t, await quote(limited, 'Bearer nope', from(forwardedFor)), 401, 'Invalid API key')
    assertRefusal(t, await quote(limited, 'Bearer nope', from('192.0.2.4')), 429, /^Too many requests/)
  })

  t.test('TRUST_PROXY on: X-Forwarded-For names the client', async (t) => {
    const proxied = await gatewayWith(t, { ...env, AUTH_FAILURE_LIMIT: '3', TRUST_PROXY: 'true' })
    const from = (forwardedFor: string) => ({ ip: '10.6.0.1', forwardedFor })
    for (let i = 0; i < 3; i++) assertRefusal(t, await quote(proxied, 'Bearer nope', from('198.51.100.1')), 401, 'Invalid API key')
    assertRefusal(t, await quote(proxied, 'Bearer nope', from('198.51.100.1')), 429, /^Too many requests/)
    assertRefusal(t, await quote(proxied, 'Bearer nope', from('198.51.100.2')), 401, 'Invalid API key')
  })
})

t.test('with Redis out of reach the limit fails open', async (t) => {
  const redis = await startOwnRedis(t)
  const gateway = await gatewayWith(t, { REDIS_URL: redis.url, LOG_LEVEL: 'silent', AUTH_FAILURE_LIMIT: '1' })
  await redis.stop()
  const from = { ip: '10.7.0.1' }
  for (let i = 0; i < 4; i++) assertRefusal(t, await quote(gateway, 'Bearer nope', from), 401, 'Invalid API key')
})

t.test('TRUST_PROXY takes what fastify takes', async (t) => {
  const trust = (value?: string) => loadConfig(gatewayEnv, { ...TEST_SECRETS, ...(value === undefined ? {} : { TRUST_PROXY: value }) }).TRUST_PROXY
  t.equal(trust(), false, 'off by default')
  t.equal(trust('true'), true)
  t.equal(trust('false'), false)
  t.equal(trust('2'), 2, 'a number of hops')
  t.same(trust('10.0.0.1, 10.0.0.0/8'), ['10.0.0.1', '10.0.0.0/8'], 'a comma list of addresses')
  t.same(trust('loopback,uniquelocal,fd00::/8,::1'), ['loopback', 'uniquelocal', 'fd00::/8', '::1'], "proxy-addr's named ranges and IPv6")
  for (const bad of ['banana', '10.0.0.1/33', '10.0.0.1/8/8', ',', '300.1.1.1']) t.throws(() => trust(bad), /TRUST_PROXY: must be true, false, a number of hops/, `${bad} is refused`)
  const hops = gatewayServerOptions(loadConfig(gatewayEnv, { ...TEST_SECRETS, TRUST_PROXY: '1' })).trustProxy
  t.ok(typeof hops === 'function' && hops('10.0.0.1', 0) && !hops('10.0.0.2', 1), 'one hop trusts the socket peer only')
})
