import { Webhook } from 'standardwebhooks'
import { loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import type { WebhookEndpoint } from '../../../shared/db/webhooks.js'
import { createEndpoint, openSecrets } from '../../../shared/webhooks/endpoints.js'
import { createSecretBox, SecretKeyMissingError } from '../../../shared/webhooks/secret-box.js'
import { devWebhookSecretKeys } from '../../../shared/webhooks/dev-key-ring.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { signedHeaders } from '../../../shared/webhooks/signing.js'
import type { LightMyRequestResponse } from 'fastify'
import t, { type Test } from 'tap'
import { createApiKey } from '../../../shared/accounts/api-keys.js'
import { ORDER_EVENT_TYPES } from '../../../shared/courier.js'
import { seedAccount } from '../../helpers/accounts.js'
import { useTestDb } from '../../helpers/db.js'
import { walletsAgainstLedger } from '../../helpers/db.js'
import { assertError, ISO_UTC, PLACE } from '../../helpers/gateway.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

// DESIGN.md section 9 (webhook endpoints) and section 13 items 2, 10 and 14, through the
// gateway's HTTP interface: the endpoints API, its validation, its URL rules, its limits and
// its scope. Deliveries themselves are test/services/webhooks/delivery.test.ts.

const ENDPOINTS = '/v2/business/webhook-endpoints'
const ENDPOINT_ID = /^we_[0-9A-HJKMNP-TV-Z]{16}$/
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const DAY_MS = 24 * 3600 * 1000
const TYPES_MESSAGE = `each value in event_types must be one of the following values: ${ORDER_EVENT_TYPES.join(', ')}`
const FORBIDDEN = 'Insufficient API key scope'

// The API's JSON, read field by field as the tests need it.
type Resource = Record<string, any>

t.test('webhook endpoints through the gateway (URL rules relaxed, as under npm start)', async (t) => {
  const { gateway, db } = await startStack(t)
  const { sql } = db

  const call = (apiKey: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    gateway.inject({ method, url, headers: bearer(apiKey), ...(payload !== undefined && { payload: payload as never }) })
  const create = async (t: Test, apiKey: string, body: Record<string, unknown>): Promise<Resource> => {
    const response = await call(apiKey, 'POST', ENDPOINTS, body)
    t.equal(response.statusCode, 201, `created: ${response.body}`)
    return response.json()
  }
  const list = async (t: Test, apiKey: string): Promise<Resource[]> => {
    const response = await call(apiKey, 'GET', ENDPOINTS)
    t.equal(response.statusCode, 200, `listed: ${response.body}`)
    t.strictSame(Object.keys(response.json()), ['data'], 'the list is { data }')
    return response.json().data
  }
  const box = createSecretBox(loadConfig(webhookKeysEnv, db.env).WEBHOOK_SECRET_KEYS)
  const raw = async (id: string) => (await sql`select secret, previous_secret, previous_secret_expires_at from webhook_endpoints where id = ${id}`)[0]
  // The secrets as the sender signs with them: opened with the deployment's key ring.
  const stored = async (id: string) => openSecrets((await raw(id)) as WebhookEndpoint, box)
  const notFound = (t: Test, response: LightMyRequestResponse, path: string, id: string) =>
    assertError(t, response, { status: 404, path, message: `Webhook endpoint ${id} was not found` })

  const owner = await seedAccount(sql, { balance: 100_000, scopes: ['orders:write', 'webhooks:write'] })

  t.test('POST creates: 201 with the secret, shown there only', async (t) => {
    const before = Date.now()
    const created = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/hooks', event_types: ['order.delivered', 'order.cancelled'], description: 'Dispatch board' })
    const after = Date.now()
    t.strictSame(created, {
      id: created.id,
      url: 'http://127.0.0.1:9/hooks',
      event_types: ['order.delivered', 'order.cancelled'],
      description: 'Dispatch board',
      status: 'enabled',
      disabled_reason: null,
      livemode: true,
      created_at: created.created_at,
      secret: created.secret,
    }, 'the whole answer: the endpoint and its secret')
    t.match(created.id, ENDPOINT_ID, 'we_ and 16 base32 characters')
    t.match(created.secret, SECRET, 'whsec_ and the base64 of 32 bytes')
    t.equal(Buffer.from(created.secret.slice('whsec_'.length), 'base64').length, 32, 'a 256-bit key')
    t.match(created.created_at, ISO_UTC)
    t.ok(Date.parse(created.created_at) >= before - 1000 && Date.parse(created.created_at) <= after + 1000, 'created_at is the creation')
    t.equal((await stored(created.id)).secret, created.secret, 'the secret sealed is the one shown')
    const sealed = (await raw(created.id)).secret
    t.notOk(sealed.includes('whsec_') || sealed.includes(created.secret.slice('whsec_'.length)), 'the database holds it sealed, not in clear')
    t.match(sealed, /^v1\.test-new\./, 'sealed under the first key of WEBHOOK_SECRET_KEYS')

    const all = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/all' })
    t.equal(all.event_types, null, 'event_types omitted: every type (null)')
    t.equal(all.description, null, 'no description: null')
    t.not(all.secret, created.secret, 'each endpoint has its own secret')

    const listed = await list(t, owner.apiKey)
    t.same(listed.map((endpoint) => endpoint.id), [created.id, all.id], 'both listed, oldest first')
    const { secret: _secret, ...withoutSecret } = created
    t.strictSame(listed[0], withoutSecret, 'the list shows the endpoint as created, without its secret')
    for (const endpoint of listed) {
      t.notOk('secret' in endpoint, `${endpoint.id}: no secret in the list`)
      t.notOk(JSON.stringify(endpoint).includes('whsec_'), `${endpoint.id}: no secret anywhere in it`)
    }

    const deliveries = await call(owner.apiKey, 'GET', `${ENDPOINTS}/${created.id}/deliveries`)
    t.equal(deliveries.statusCode, 200, deliveries.body)
    t.strictSame(deliveries.json(), { data: [], has_more: false, next_cursor: null }, 'a new endpoint has an empty delivery log')
    t.notOk(deliveries.body.includes('whsec_'), 'nor does its delivery log show a secret')

    for (const endpoint of listed) t.equal((await call(owner.apiKey, 'DELETE', `${ENDPOINTS}/${endpoint.id}`)).statusCode, 204)
  })

  t.test('validation: 400 naming the field', async (t) => {
    const cases: [string, unknown, string, string | undefined][] = [
      ['bad event type', { url: 'http://127.0.0.1:9/', event_types: ['order.created', 'order.exploded'] }, TYPES_MESSAGE, 'event_types'],
      ['not an event type at all', { url: 'http://127.0.0.1:9/', event_types: [42] }, TYPES_MESSAGE, 'event_types'],
      ['empty array', { url: 'http://127.0.0.1:9/', event_types: [] }, 'event_types should not be empty', 'event_types'],
      ['duplicates', { url: 'http://127.0.0.1:9/', event_types: ['order.delivered', 'order.delivered'] }, "All event_types's elements must be unique", 'event_types'],
      ['not an array', { url: 'http://127.0.0.1:9/', event_types: 'order.delivered' }, 'event_types must be an array', 'event_types'],
      ['more elements than there are types', { url: 'http://127.0.0.1:9/', event_types: [...ORDER_EVENT_TYPES, 'order.created'] }, `event_types must contain no more than ${ORDER_EVENT_TYPES.length} elements`, 'event_types'],
      ['url missing', { event_types: ['order.created'] }, 'url should not be empty', 'url'],
      ['url blank', { url: '   ' }, 'url should not be empty', 'url'],
      ['url not a string', { url: 42 }, 'url must be a string', 'url'],
      ['url too long', { url: `http://127.0.0.1:9/${'a'.repeat(2048)}` }, 'url must be shorter than or equal to 2048 characters', 'url'],
      ['description not a string', { url: 'http://127.0.0.1:9/', description: ['x'] }, 'description must be a string', 'description'],
      ['description too long', { url: 'http://127.0.0.1:9/', description: 'd'.repeat(256) }, 'description must be shorter than or equal to 255 characters', 'description'],
      ['body not an object', ['http://127.0.0.1:9/'], 'body must be a JSON object', undefined],
    ]
    for (const [what, body, message, field] of cases) {
      t.comment(what)
      const response = await call(owner.apiKey, 'POST', ENDPOINTS, body)
      assertError(t, response, { status: 400, path: ENDPOINTS, message, errors: 'listed' })
      t.equal(response.json().errors[0].field, field, `${what}: the error names ${field ?? 'no field'}`)
    }
    t.strictSame(await list(t, owner.apiKey), [], 'nothing was created by a refused request')

    const url = await call(owner.apiKey, 'POST', ENDPOINTS, { url: 'not a url' })
    assertError(t, url, { status: 400, path: ENDPOINTS, message: 'url must be an absolute URL' })
    const scheme = await call(owner.apiKey, 'POST', ENDPOINTS, { url: 'ftp://127.0.0.1/hooks' })
    assertError(t, scheme, { status: 400, path: ENDPOINTS, message: 'url must use https' })
    const credentials = await call(owner.apiKey, 'POST', ENDPOINTS, { url: 'http://user:pass@127.0.0.1:9/hooks' })
    assertError(t, credentials, { status: 400, path: ENDPOINTS, message: 'url must not carry credentials' })

    const described = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/d', description: 'é'.repeat(255), event_types: [...ORDER_EVENT_TYPES] })
    t.equal(described.description, 'é'.repeat(255), 'a description of 255 characters is kept whole')
    t.strictSame(described.event_types, [...ORDER_EVENT_TYPES], 'every type listed explicitly is accepted')
    t.equal((await call(owner.apiKey, 'DELETE', `${ENDPOINTS}/${described.id}`)).statusCode, 204)
  })

  t.test('at most 10 endpoints per business: the 11th is a 409', async (t) => {
    const full = await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Full House Ltd' })
    const other = await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Next Door Ltd' })
    const ids: string[] = []
    for (let i = 0; i < 10; i++) ids.push((await create(t, full.apiKey, { url: `http://127.0.0.1:9/${i}` })).id)
    assertError(t, await call(full.apiKey, 'POST', ENDPOINTS, { url: 'http://127.0.0.1:9/eleven' }), {
      status: 409, path: ENDPOINTS, message: 'A business can have at most 10 webhook endpoints',
    })
    t.equal((await list(t, full.apiKey)).length, 10, 'still 10')
    t.ok(await create(t, other.apiKey, { url: 'http://127.0.0.1:9/other' }), 'the limit is per business: another business creates')

    t.equal((await call(full.apiKey, 'DELETE', `${ENDPOINTS}/${ids[0]}`)).statusCode, 204)
    const again = await create(t, full.apiKey, { url: 'http://127.0.0.1:9/again' })
    t.match(again.id, ENDPOINT_ID, 'after a delete there is room for one more')
    assertError(t, await call(full.apiKey, 'POST', ENDPOINTS, { url: 'http://127.0.0.1:9/twelve' }), {
      status: 409, path: ENDPOINTS, message: 'A business can have at most 10 webhook endpoints',
    })

    // Created at once, they still cannot pass 10 between them.
    const racer = await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Racer Ltd' })
    const answers = await Promise.all(Array.from({ length: 14 }, (_, i) => call(racer.apiKey, 'POST', ENDPOINTS, { url: `http://127.0.0.1:9/race-${i}` })))
    t.same(answers.map((answer) => answer.statusCode).sort(), [...Array(10).fill(201), ...Array(4).fill(409)], '10 created and 4 refused out of 14 at once')
    const [{ count }] = await sql`select count(*)::int from webhook_endpoints where business_id = ${racer.businessId}`
    t.equal(count, 10, 'the database holds 10')
  })

  t.test('DELETE: 204, then 404 for it and everything about it', async (t) => {
    const endpoint = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/delete-me' })
    const path = `${ENDPOINTS}/${endpoint.id}`
    const deleted = await call(owner.apiKey, 'DELETE', path)
    t.equal(deleted.statusCode, 204)
    t.equal(deleted.body, '', 'no body')
    t.notOk((await list(t, owner.apiKey)).some((listed) => listed.id === endpoint.id), 'gone from the list')
    // The row is marked, and the webhook sender removes it with its rows (test/shared/db/webhooks.test.ts).
    t.ok((await sql`select deleted_at from webhook_endpoints where id = ${endpoint.id}`)[0]?.deletedAt, 'marked deleted in the database')
    notFound(t, await call(owner.apiKey, 'DELETE', path), path, endpoint.id)
    notFound(t, await call(owner.apiKey, 'POST', `${path}/rotate-secret`), `${path}/rotate-secret`, endpoint.id)
    notFound(t, await call(owner.apiKey, 'GET', `${path}/deliveries`), `${path}/deliveries`, endpoint.id)
    // Ids that could never be an endpoint's answer the same.
    for (const id of ['we_0000000000000000', 'we_nope', 'evt_00000000000000000000']) {
      notFound(t, await call(owner.apiKey, 'DELETE', `${ENDPOINTS}/${id}`), `${ENDPOINTS}/${id}`, id)
    }
  })

  t.test('rotate-secret: 200 { id, secret, previous_secret_expires_at } 24 h on; the old secret is kept until then', async (t) => {
    const endpoint = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/rotate' })
    const before = Date.now()
    const response = await call(owner.apiKey, 'POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`)
    const after = Date.now()
    t.equal(response.statusCode, 200, response.body)
    const rotated = response.json()
    t.strictSame(Object.keys(rotated).sort(), ['id', 'previous_secret_expires_at', 'secret'], 'exactly id, secret and previous_secret_expires_at')
    t.equal(rotated.id, endpoint.id)
    t.match(rotated.secret, SECRET, 'a new whsec_ secret')
    t.not(rotated.secret, endpoint.secret, 'not the old one')
    t.match(rotated.previous_secret_expires_at, ISO_UTC)
    const expires = Date.parse(rotated.previous_secret_expires_at)
    t.ok(expires >= before + DAY_MS - 1000 && expires <= after + DAY_MS + 1000, `the old secret signs until 24 h after the rotation (${rotated.previous_secret_expires_at})`)
    const row = await stored(endpoint.id)
    t.equal(row.secret, rotated.secret, 'the new secret signs')
    t.equal(row.previousSecret, endpoint.secret, 'the old one is kept alongside')
    t.equal(row.previousSecretExpiresAt?.toISOString(), rotated.previous_secret_expires_at, 'until the time answered')

    const twice = (await call(owner.apiKey, 'POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`)).json()
    t.not(twice.secret, rotated.secret, 'a second rotation makes another secret')
    t.equal((await stored(endpoint.id)).previousSecret, rotated.secret, 'and the secret it replaces is the one kept')
    const listed = (await list(t, owner.apiKey)).find((item) => item.id === endpoint.id)
    t.notOk(listed && 'secret' in listed, 'the list still shows no secret after a rotation')
    t.equal((await call(owner.apiKey, 'DELETE', `${ENDPOINTS}/${endpoint.id}`)).statusCode, 204)
  })

  t.test('rotate-secret with expire_previous_now: the old secret stops signing at once', async (t) => {
    const endpoint = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/leaked' })
    const before = Date.now()
    const response = await call(owner.apiKey, 'POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`, { expire_previous_now: true })
    t.equal(response.statusCode, 200, response.body)
    const rotated = response.json()
    t.ok(Date.parse(rotated.previous_secret_expires_at) <= Date.now() && Date.parse(rotated.previous_secret_expires_at) >= before - 1000, `the old secret expired at the rotation (${rotated.previous_secret_expires_at})`)
    const headers = signedHeaders(await stored(endpoint.id), 'evt_test', '{}', new Date())
    t.equal(headers['webhook-signature'].split(' ').length, 1, 'the next delivery carries one signature')
    t.doesNotThrow(() => new Webhook(rotated.secret).verify('{}', headers), 'made with the new secret')
    t.throws(() => new Webhook(endpoint.secret).verify('{}', headers), 'not with the leaked one')
    assertError(t, await call(owner.apiKey, 'POST', `${ENDPOINTS}/${endpoint.id}/rotate-secret`, { expire_previous_now: 'yes' }), { status: 400, path: `${ENDPOINTS}/${endpoint.id}/rotate-secret`, message: 'expire_previous_now must be a boolean', errors: 'listed' })
    t.equal((await call(owner.apiKey, 'DELETE', `${ENDPOINTS}/${endpoint.id}`)).statusCode, 204)
  })

  t.test("another business's endpoint is a 404, never a 403", async (t) => {
    const mine = await create(t, owner.apiKey, { url: 'http://127.0.0.1:9/mine' })
    const stranger = await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Stranger Ltd' })
    const path = `${ENDPOINTS}/${mine.id}`
    t.strictSame(await list(t, stranger.apiKey), [], "the stranger's list does not show it")
    notFound(t, await call(stranger.apiKey, 'DELETE', path), path, mine.id)
    notFound(t, await call(stranger.apiKey, 'POST', `${path}/rotate-secret`), `${path}/rotate-secret`, mine.id)
    notFound(t, await call(stranger.apiKey, 'GET', `${path}/deliveries`), `${path}/deliveries`, mine.id)
    t.equal((await stored(mine.id)).secret, mine.secret, 'the secret was not rotated')
    t.ok((await list(t, owner.apiKey)).some((listed) => listed.id === mine.id), 'nor the endpoint deleted')
    t.equal((await call(owner.apiKey, 'DELETE', path)).statusCode, 204)
  })

  t.test('scopes: webhooks:write for every endpoint route and for redeliver', async (t) => {
    const business = await seedAccount(sql, { balance: 50_000, scopes: ['orders:write'], name: 'Scoped Ltd' })
    const ordersOnly = business.apiKey
    const reader = (await createApiKey(sql, business.businessId, ['orders:read'])).apiKey
    const hooksOnly = (await createApiKey(sql, business.businessId, ['webhooks:write'])).apiKey

    // An event of this business to redeliver: one placement.
    const placed = await call(ordersOnly, 'POST', PLACE, [shipment()])
    t.equal(placed.statusCode, 201, placed.body)
    const [event] = await sql`select id from events where business_id = ${business.businessId} order by sequence`
    t.ok(event, 'the placement wrote its event')
    const redeliver = `/v2/business/events/${event!.id}/redeliver`

    const endpoint = await create(t, hooksOnly, { url: 'http://127.0.0.1:9/scoped', event_types: ['order.created'] })
    const path = `${ENDPOINTS}/${endpoint.id}`
    const routes: ['GET' | 'POST' | 'DELETE', string, unknown][] = [
      ['POST', ENDPOINTS, { url: 'http://127.0.0.1:9/forbidden' }],
      ['GET', ENDPOINTS, undefined],
      ['DELETE', path, undefined],
      ['POST', `${path}/rotate-secret`, undefined],
      ['GET', `${path}/deliveries`, undefined],
      ['POST', redeliver, undefined],
    ]
    for (const key of [ordersOnly, reader]) {
      for (const [method, url, payload] of routes) {
        t.comment(`${key === reader ? 'orders:read' : 'orders:write'} ${method} ${url}`)
        assertError(t, await call(key, method, url, payload), { status: 403, path: url, message: FORBIDDEN })
      }
    }
    t.equal((await stored(endpoint.id)).secret, endpoint.secret, 'no rotation went through')
    const [{ count: endpoints }] = await sql`select count(*)::int from webhook_endpoints where business_id = ${business.businessId}`
    t.equal(endpoints, 1, 'no endpoint was created or deleted')
    const [{ count: redeliveries }] = await sql`select count(*)::int from webhook_deliveries where redelivery > 0`
    t.equal(redeliveries, 0, 'no redelivery was queued')

    // webhooks:write alone manages endpoints and redelivers, and nothing else.
    t.equal((await list(t, hooksOnly)).length, 1)
    t.equal((await call(hooksOnly, 'GET', `${path}/deliveries`)).statusCode, 200)
    const queued = await call(hooksOnly, 'POST', redeliver)
    t.equal(queued.statusCode, 202, queued.body)
    t.strictSame(queued.json(), { event_id: event!.id, endpoint_ids: [endpoint.id] }, 'one more delivery to the one matching endpoint')
    t.equal((await call(hooksOnly, 'POST', `${path}/rotate-secret`)).statusCode, 200)
    t.equal((await call(hooksOnly, 'DELETE', path)).statusCode, 204)
    assertError(t, await call(hooksOnly, 'GET', '/v2/business/orders'), { status: 403, path: '/v2/business/orders', message: FORBIDDEN })
    assertError(t, await call(hooksOnly, 'POST', PLACE, [shipment()]), { status: 403, path: PLACE, message: FORBIDDEN })
    const missing = '/v2/business/events/evt_00000000000000000000/redeliver'
    assertError(t, await call(hooksOnly, 'POST', missing), { status: 404, path: missing, message: 'Event evt_00000000000000000000 was not found' })
    const strangersEvent = await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Other Events Ltd' })
    assertError(t, await call(strangersEvent.apiKey, 'POST', redeliver), { status: 404, path: redeliver, message: `Event ${event!.id} was not found` })

    for (const wallet of await walletsAgainstLedger(sql)) t.equal(wallet.balance, wallet.ledger, 'balance = sum of the ledger')
  })
})

t.test('URL rules relaxed (npm start, WEBHOOK_ALLOW_PRIVATE=true): a private host is taken, a host that does not resolve is not', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false, env: { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' } })
  const account = await seedAccount(db.sql, { scopes: ['webhooks:write'] })
  const post = (url: string) => gateway.inject({ method: 'POST', url: ENDPOINTS, headers: bearer(account.apiKey), payload: { url } })
  t.equal((await post('http://127.0.0.1:9/hooks')).statusCode, 201, 'a local receiver')
  t.equal((await post('http://localhost:9/hooks')).statusCode, 201, 'by name too')
  for (const url of ['http://nonexistent.invalid/a', 'https://courier-webhooks-test.invalid:8443/x']) {
    assertError(t, await post(url), { status: 400, path: ENDPOINTS, message: 'url host could not be resolved' })
  }
  const [{ count }] = await db.sql`select count(*)::int from webhook_endpoints`
  t.equal(count, 2, 'the typo was not stored')
})

t.test('URL rules as in production (WEBHOOK_ALLOW_HTTP=false, WEBHOOK_ALLOW_PRIVATE=false)', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false, env: { WEBHOOK_ALLOW_HTTP: 'false', WEBHOOK_ALLOW_PRIVATE: 'false' } })
  const account = await seedAccount(db.sql, { scopes: ['webhooks:write'] })
  const post = (url: string) => gateway.inject({ method: 'POST', url: ENDPOINTS, headers: bearer(account.apiKey), payload: { url } })
  const refused = async (t: Test, url: string, message: string) => {
    t.comment(url)
    assertError(t, await post(url), { status: 400, path: ENDPOINTS, message })
  }

  await refused(t, 'http://1.1.1.1/hooks', 'url must use https')
  await refused(t, 'http://example.com/hooks', 'url must use https')
  await refused(t, 'ftp://1.1.1.1/hooks', 'url must use https')
  for (const url of [
    'https://127.0.0.1/', 'https://localhost/', 'https://10.0.0.1/', 'https://[::1]/',
    'https://192.168.1.20/hooks', 'https://172.16.5.4/', 'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/',
    'https://0.0.0.0/', 'https://[fe80::1]/', 'https://[fd00::1]/', 'https://[::ffff:127.0.0.1]/', 'https://[::ffff:10.0.0.1]/', 'https://2130706433/',
    // IPv4 special-purpose blocks: documentation, benchmarking, 6to4 relay, reserved, broadcast.
    'https://192.0.2.10/', 'https://198.51.100.7/', 'https://203.0.113.9/', 'https://198.18.0.1/', 'https://192.88.99.1/', 'https://240.0.0.1/', 'https://255.255.255.255/',
    // IPv6 forms that reach IPv4 or private space: NAT64 (RFC 6052, RFC 8215), 6to4, IPv4-compatible,
    // SIIT, Teredo, site-local, discard, documentation, multicast, unspecified.
    'https://[64:ff9b::7f00:1]/', 'https://[64:ff9b::808:808]/', 'https://[64:ff9b:1::a00:1]/', 'https://[2002:7f00:1::]/', 'https://[2002:a00:1::1]/',
    'https://[::127.0.0.1]/', 'https://[::10.0.0.1]/', 'https://[::ffff:0:7f00:1]/', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/',
    'https://[fec0::1]/', 'https://[100::1]/', 'https://[2001:db8::1]/', 'https://[ff02::1]/', 'https://[::]/',
  ]) {
    await refused(t, url, 'url host resolves to a private address')
  }
  await refused(t, 'https://no-such-host.invalid/hooks', 'url host could not be resolved')
  await refused(t, 'https://courier-webhooks-test.invalid:8443/x', 'url host could not be resolved')
  await refused(t, 'not a url', 'url must be an absolute URL')
  await refused(t, '/relative/hooks', 'url must be an absolute URL')
  const [{ count: none }] = await db.sql`select count(*)::int from webhook_endpoints`
  t.equal(none, 0, 'no refused URL was stored')

  // Public addresses pass (IP literals: no DNS needed on this machine), IPv4 ones included.
  for (const url of ['https://1.1.1.1/hooks', 'https://8.8.8.8:8443/x', 'https://[2606:4700:4700::1111]:8443/hooks', 'https://[::ffff:101:101]/mapped']) {
    const accepted = await post(url)
    t.equal(accepted.statusCode, 201, `${url}: ${accepted.body}`)
    t.equal(accepted.json().url, url, 'stored as given')
  }
})

t.test('the key ring rotates: webhooks:reencrypt seals every stored secret under the first key, so the old one can go', async (t) => {
  const db = await useTestDb(t)
  const account = await seedAccount(db.sql, { scopes: ['webhooks:write'] })
  const [newKey, oldKey] = loadConfig(webhookKeysEnv, db.env).WEBHOOK_SECRET_KEYS
  const scope = { businessId: account.businessId, livemode: true }
  const rules = { allowHttp: true, allowPrivate: true }
  const underOld = await createEndpoint(db.sql, scope, { url: 'http://127.0.0.1:9/old' }, rules, createSecretBox([oldKey!]))
  const legacy = await createEndpoint(db.sql, scope, { url: 'http://127.0.0.1:9/legacy' }, rules, createSecretBox([oldKey!]))
  t.equal(underOld.kind, 'created')
  t.equal(legacy.kind, 'created')
  if (underOld.kind !== 'created' || legacy.kind !== 'created') return
  // A row written before secrets were encrypted: the secret in clear.
  await db.sql`update webhook_endpoints set secret = ${legacy.endpoint.secret} where id = ${legacy.endpoint.id}`

  const run = await runOperatorCli(db, ['webhooks:reencrypt'])
  t.equal(run.code, 0, run.stderr)
  t.same(run.json, { key_id: newKey!.id, resealed: 2, already_current: 0 })
  const onlyNew = createSecretBox([newKey!])
  for (const created of [underOld.endpoint, legacy.endpoint]) {
    const [row] = await db.sql`select secret from webhook_endpoints where id = ${created.id}`
    t.match(row!.secret, /^v1\.test-new\./, `${created.url}: sealed under the new key`)
    t.equal(onlyNew.open(row!.secret), created.secret, `${created.url}: the same secret, opened without the old key`)
  }
  t.same((await runOperatorCli(db, ['webhooks:reencrypt'])).json, { key_id: newKey!.id, resealed: 0, already_current: 2 }, 'a second run has nothing to do')
  t.throws(() => createSecretBox([newKey!]).open(createSecretBox([oldKey!]).seal('whsec_x')), SecretKeyMissingError, 'a value sealed under a dropped key cannot be opened')
  const refused = await runOperatorCli(db, ['webhooks:reencrypt'], { WEBHOOK_SECRET_KEYS: 'k1:tooshort' })
  t.equal(refused.code, 1)
  t.match(refused.stderr, /WEBHOOK_SECRET_KEYS: must be id:base64key/)
})

t.test('webhooks:reencrypt beside npm start: without WEBHOOK_SECRET_KEYS it opens with the development ring, never in production', async (t) => {
  const db = await useTestDb(t)
  const account = await seedAccount(db.sql, { scopes: ['webhooks:write'] })
  // The ring `npm start` hands its services when WEBHOOK_SECRET_KEYS is unset (made once, kept in .dev-secrets/).
  const [devKey] = loadConfig(webhookKeysEnv, { ...db.env, WEBHOOK_SECRET_KEYS: devWebhookSecretKeys() }).WEBHOOK_SECRET_KEYS
  const created = await createEndpoint(db.sql, { businessId: account.businessId, livemode: true }, { url: 'http://127.0.0.1:9/dev' }, { allowHttp: true, allowPrivate: true }, createSecretBox([devKey!]))
  t.equal(created.kind, 'created')

  const unset = { WEBHOOK_SECRET_KEYS: '' }
  const run = await runOperatorCli(db, ['webhooks:reencrypt'], { ...unset, NODE_ENV: 'development' })
  t.equal(run.code, 0, run.stderr)
  t.same(run.json, { key_id: devKey!.id, resealed: 0, already_current: 1 }, 'the endpoint npm start sealed opens under the same ring')

  const production = await runOperatorCli(db, ['webhooks:reencrypt'], { ...unset, NODE_ENV: 'production' })
  t.equal(production.code, 1)
  t.equal(production.stdout, '')
  t.equal(production.stderr.trim().split('\n').length, 1, 'one line')
  t.match(production.stderr, /^Invalid configuration: WEBHOOK_SECRET_KEYS: is required.*export WEBHOOK_SECRET_KEYS="\$\(cat \.dev-secrets\/webhook-secret-keys\)"/, 'production never falls back; the line says how to pass npm start\'s ring')
})
