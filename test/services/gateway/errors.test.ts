import { connect, type AddressInfo } from 'node:net'
import t from 'tap'
import { Client } from 'undici'
import { holdLock, lockWaiters } from '../../helpers/db.js'
import { waitFor } from '../../helpers/processes.js'
import { assertError, CATALOG, PLACE, QUOTE, quoteBody, startGateway } from '../../helpers/gateway.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'
import { seedAccount } from '../../helpers/accounts.js'

t.test('gateway errors and request ids', async (t) => {
  const { gateway, sql, account, catalog } = await startGateway(t)

  t.test('body errors with a valid key: 400, 415, 413', async (t) => {
    const key = bearer(account.apiKey)
    const json = { ...key, 'content-type': 'application/json' }
    const malformed = { status: 400, message: 'Malformed JSON in request body' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: '{"weight": ' }), { ...malformed, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: `${QUOTE}?debug=1`, headers: json, payload: "{'weight': 2}" }), { ...malformed, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: '[{"weight": 2},]' }), { ...malformed, path: PLACE })
    // `__proto__` and `constructor` are JSON like any key: unknown fields, ignored (DESIGN 2), never
    // an object's prototype.
    const withProto = JSON.stringify(quoteBody()).replace(/^\{/, '{"__proto__":{"weight":500},"constructor":{"prototype":{"x":1}},')
    const quoted = await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: withProto })
    t.equal(quoted.statusCode, 200, quoted.body)
    const plain = await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: JSON.stringify(quoteBody()) })
    const { quote_id: _one, expires_at: _at, ...priced } = quoted.json()
    const { quote_id: _two, expires_at: _at2, ...plainPriced } = plain.json()
    t.same(priced, plainPriced, 'priced as without them: the weight under __proto__ was no weight')

    // An empty body sent as JSON is no body: a route that needs one says what it needs, and a
    // body-less POST or DELETE (as many clients send it, with the JSON header) goes through.
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: '' }), { status: 400, path: QUOTE, message: 'body must be a JSON object', errors: 'listed' })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: '' }), { status: 400, path: PLACE, message: 'body must be an array of 1 to 100 shipments', errors: 'listed' })
    const hooks = { ...bearer((await seedAccount(sql, { scopes: ['webhooks:write'], name: 'Hooks Ltd' })).apiKey), 'content-type': 'application/json' }
    const endpoint = await gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: hooks, payload: { url: 'http://127.0.0.1:9/hooks' } })
    t.equal(endpoint.statusCode, 201, endpoint.body)
    const endpointUrl = `/v2/business/webhook-endpoints/${endpoint.json().id}`
    t.equal((await gateway.inject({ method: 'POST', url: `${endpointUrl}/rotate-secret`, headers: hooks, payload: '' })).statusCode, 200, 'rotate-secret with an empty JSON body')
    t.equal((await gateway.inject({ method: 'DELETE', url: endpointUrl, headers: hooks, payload: '' })).statusCode, 204, 'delete with an empty JSON body')

    const unsupported = { status: 415, message: 'Content-Type must be application/json' }
    // JSON is UTF-8: another charset declared is refused, not read as UTF-8; UTF-8 by any spelling is JSON.
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': 'application/json; charset=utf-16' }, payload: JSON.stringify(quoteBody()) }), { status: 415, path: QUOTE, message: 'Content-Type must be application/json, in UTF-8' })
    for (const type of ['application/json; charset=UTF-8', 'application/json;charset="utf8"']) {
      t.equal((await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': type }, payload: JSON.stringify(quoteBody()) })).statusCode, 200, type)
    }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': 'text/plain' }, payload: JSON.stringify(quoteBody()) }), { ...unsupported, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: { ...key, 'content-type': 'text/plain' }, payload: JSON.stringify([shipment()]) }), { ...unsupported, path: PLACE })
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: { ...key, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'weight=2' }), { ...unsupported, path: QUOTE })

    // One byte over the limit: the padding makes the JSON exactly 1048577 bytes long.
    const base = JSON.stringify({ ...quoteBody(), pad: '' })
    const overBy1 = JSON.stringify({ ...quoteBody(), pad: 'x'.repeat(1048577 - Buffer.byteLength(base)) })
    t.equal(Buffer.byteLength(overBy1), 1048577)
    const tooLarge = { status: 413, message: 'Request body is larger than 1048576 bytes' }
    assertError(t, await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: overBy1 }), { ...tooLarge, path: QUOTE })
    assertError(t, await gateway.inject({ method: 'POST', url: PLACE, headers: json, payload: `[${overBy1}]` }), { ...tooLarge, path: PLACE })
    // At the limit exactly, the body is read and reaches validation.
    const atLimit = JSON.stringify({ ...quoteBody(), pad: 'x'.repeat(1048576 - Buffer.byteLength(base)) })
    t.equal((await gateway.inject({ method: 'POST', url: QUOTE, headers: json, payload: atLimit })).statusCode, 200, 'a body of exactly 1 MiB is accepted')
  })

  t.test('unknown routes are 404 whatever the key; health needs no key', async (t) => {
    for (const headers of [{}, bearer(account.apiKey), bearer('ck_live_unknown')]) {
      assertError(t, await gateway.inject({ method: 'GET', url: '/v2/nothing', headers }), { status: 404, path: '/v2/nothing', message: 'Cannot GET /v2/nothing' })
      assertError(t, await gateway.inject({ method: 'POST', url: '/v2/business/unknown?x=1', headers, payload: {} }), { status: 404, path: '/v2/business/unknown', message: 'Cannot POST /v2/business/unknown' })
    }
    assertError(t, await gateway.inject({ method: 'GET', url: QUOTE, headers: bearer(account.apiKey) }), { status: 404, path: QUOTE, message: `Cannot GET ${QUOTE}` })
    // A path the router cannot read (a segment past its 100 characters, broken percent-encoding)
    // is answered before any hook runs, and still carries the request id, header and body alike.
    for (const url of [`/v2/business/orders/ORD-${'A'.repeat(300)}`, '/v2/business/orders/%E0%A4%A']) {
      assertError(t, await gateway.inject({ method: 'GET', url, headers: bearer(account.apiKey) }), { status: 404, path: url, message: `Cannot GET ${url}` })
    }
    assertError(t, await gateway.inject({ method: 'POST', url: '/business/order/cost', headers: bearer(account.apiKey), payload: quoteBody() }), { status: 404, path: '/business/order/cost', message: 'Cannot POST /business/order/cost' })

    const health = await gateway.inject({ method: 'GET', url: '/healthz' })
    t.equal(health.statusCode, 200)
    t.strictSame(health.json(), { status: 'ok' })
    const ready = await gateway.inject({ method: 'GET', url: '/readyz' })
    t.equal(ready.statusCode, 200)
    t.strictSame(ready.json(), { status: 'ready', postgres: true, redis: true })
  })

  t.test("what Node's HTTP parser refuses before any route: the spec's error body too", async (t) => {
    await gateway.listen({ port: 0, host: '127.0.0.1' })
    const address = gateway.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    /** Sends raw bytes, reads until the server closes: the status and the JSON body. */
    const send = (bytes: string) => new Promise<{ status: number; body: unknown }>((resolve, reject) => {
      const chunks: Buffer[] = []
      const socket = connect(port, '127.0.0.1', () => socket.write(bytes))
      socket.on('data', (chunk) => chunks.push(chunk)).on('error', reject).on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]), body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) })
      })
    })
    const spec = { timestamp: String, message: String }
    const huge = await send(`GET ${CATALOG}?x=1 HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(20_000)}\r\n\r\n`)
    t.equal(huge.status, 431)
    t.match(huge.body, { ...spec, statusCode: 431, path: CATALOG, message: 'Request headers are too large' })
    const length = await send(`POST ${QUOTE} HTTP/1.1\r\nHost: x\r\nContent-Length: twelve\r\n\r\n`)
    t.equal(length.status, 400)
    t.match(length.body, { ...spec, statusCode: 400, path: QUOTE, message: 'Malformed HTTP request' })
    const garbage = await send('\u0001\u0002 not http at all\r\n\r\n')
    t.match(garbage.body, { ...spec, statusCode: 400, path: '/', message: 'Malformed HTTP request' })
  })

  t.test('x-request-id', async (t) => {
    const own = await gateway.inject({ method: 'GET', url: CATALOG, headers: { ...bearer(account.apiKey), 'x-request-id': 'trace-42.a:b' } })
    t.equal(own.statusCode, 200)
    t.equal(own.headers['x-request-id'], 'trace-42.a:b', "a caller's own id is echoed")
    const ownError = await gateway.inject({ method: 'POST', url: QUOTE, headers: { 'x-request-id': 'trace-43' }, payload: quoteBody() })
    t.equal(ownError.headers['x-request-id'], 'trace-43')
    t.equal(ownError.json().request_id, 'trace-43', 'and carried in the error body')

    const first = await catalog(account.apiKey)
    const second = await catalog(account.apiKey)
    for (const response of [first, second]) t.match(response.headers['x-request-id'], /^[0-9a-f-]{36}$/, 'one is generated otherwise')
    t.not(first.headers['x-request-id'], second.headers['x-request-id'], 'a fresh one per request')
    t.match((await gateway.inject({ method: 'GET', url: '/healthz' })).headers['x-request-id'], /^[0-9a-f-]{36}$/, 'health answers carry one too')
  })
})

t.test('a gateway that stops: the answers in flight close their connections, so no idle keep-alive connection holds the stop up', async (t) => {
  const { gateway, db } = await startStack(t)
  const account = await seedAccount(db.sql, { balance: 100000 })
  await gateway.listen({ port: 0, host: '127.0.0.1' })
  const { port } = gateway.server.address() as AddressInfo
  // The placement waits on its wallet, locked here, so it is in flight when the gateway begins to stop.
  const walletLock = await holdLock(db.sql, (tx) => tx`select balance from wallets where business_id = ${account.businessId} for update`)
  const client = new Client(`http://127.0.0.1:${port}`)
  t.teardown(() => client.close())
  const placed = client.request({ method: 'POST', path: PLACE, headers: { ...bearer(account.apiKey), 'content-type': 'application/json' }, body: JSON.stringify([shipment()]) })
  t.ok(await waitFor(async () => (await lockWaiters(db.sql, walletLock.pid)).length > 0, 10_000), 'the placement waits on its wallet')

  const closed = gateway.close()
  t.ok(await waitFor(() => !gateway.server.listening, 10_000), 'the gateway is stopping')
  await walletLock.release()
  const inFlight = await placed
  t.equal(inFlight.statusCode, 201, 'the request in flight when the stop began is answered')
  t.equal(inFlight.headers.connection, 'close', 'and closes its connection: the client calls another instance next')
  await inFlight.body.dump()
  const open = () => new Promise<number>((resolve, reject) => gateway.server.getConnections((err, count) => (err ? reject(err) : resolve(count))))
  t.ok(await waitFor(async () => (await open()) === 0, 10_000), 'so the gateway holds no connection open, where keep-alive would hold this one for 72 s')
  await closed
})
