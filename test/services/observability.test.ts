import { Writable } from 'node:stream'
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import Fastify from 'fastify'
import t from 'tap'
import { loggerOptions, requestLog } from '../../shared/http/observability.js'
import { startMetrics } from '../../shared/telemetry/metrics-endpoint.js'
import { redactSpanUrls } from '../../shared/telemetry/redact-span.js'
import { startConsole } from '../helpers/console.js'
import { seedAccount } from '../helpers/accounts.js'
import { startOwnRedis, waitFor, waitForValue } from '../helpers/processes.js'
import { ISLAND, shipment as lagosShipment, quoteRequest } from '../helpers/shipments.js'
import { bearer, startStack } from '../helpers/stack.js'
import { onShift, pendingOffer } from '../helpers/couriers.js'

// Registered before any service is built, as `node --import register.js` does in production.
const spans = new InMemorySpanExporter()
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
provider.register()
const metrics = await startMetrics(0, '127.0.0.1')
const metricsPort = metrics.port
t.teardown(() => metrics.close())

const PHONE = '+2348099887766'
const shipment = lagosShipment({ recipient_phone: PHONE })
const quoteBody = quoteRequest()

t.test('one placement is one trace: gateway, queue, worker and SQL spans', async (t) => {
  const { gateway, db } = await startStack(t)
  const account = await seedAccount(db.sql, { balance: 100000 })
  spans.reset()
  const response = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.equal(response.statusCode, 201)
  const placementId = response.json().placement_id

  // The 201 goes out once the placement is settled, not once the worker has ended its spans:
  // the trace is read once every span checked below has ended (or the wait runs out).
  const steps = ['sql lock placement', 'sql insert orders', 'sql append events', 'sql debit wallet', 'sql settle placement']
  const traceOf = (finished: ReturnType<typeof spans.getFinishedSpans>) => {
    const place = finished.find((span) => span.name === 'placement.place')
    const inTrace = place ? finished.filter((span) => span.spanContext().traceId === place.spanContext().traceId) : []
    return { finished, place, inTrace, names: inTrace.map((span) => span.name) }
  }
  const traced = await waitForValue(async () => {
    await provider.forceFlush()
    return traceOf(spans.getFinishedSpans())
  }, ({ place, inTrace, names }) => place !== undefined && inTrace.some((span) => span.instrumentationScope.name === '@fastify/otel') && steps.every((step) => names.includes(step)), 10_000)
  const { finished, place, inTrace, names } = traced.value
  t.ok(place, 'the worker span exists')
  t.equal(place?.attributes['courier.business_id'], account.businessId)
  t.equal(place?.attributes['courier.placement_id'], placementId)
  t.ok(inTrace.some((span) => span.instrumentationScope.name === '@fastify/otel'), `gateway request span in the trace: ${names.join(', ')}`)
  t.ok(names.some((name) => /placement/.test(name) && name !== 'placement.place' && name !== 'placement.transaction'), 'BullMQ producer or consumer span in the trace')
  for (const step of steps) t.ok(names.includes(step), `${step} in the trace`)
  const everything = JSON.stringify(finished.map((span) => ({ name: span.name, attributes: span.attributes, events: span.events })))
  t.notOk(everything.includes(account.apiKey), 'the API key appears in no span')
  t.notOk(everything.includes(account.apiKey.slice(8)), 'not even its secret part')
})

t.test('a quote is one trace across gateway and pricing', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const account = await seedAccount(db.sql)
  spans.reset()
  const response = await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(account.apiKey), payload: quoteBody })
  t.equal(response.statusCode, 200)
  await provider.forceFlush()
  const fastifySpans = spans.getFinishedSpans().filter((span) => span.instrumentationScope.name === '@fastify/otel' && span.attributes['http.route'] !== undefined)
  const routes = new Map(fastifySpans.map((span) => [span.attributes['http.route'], span.spanContext().traceId]))
  t.ok(routes.get('/v2/business/order/cost'), 'gateway span')
  t.equal(routes.get('/internal/quote'), routes.get('/v2/business/order/cost'), 'the pricing span shares the gateway trace')
})

t.test('logs: request id and trace id on each line, no API key, no phone number', async (t) => {
  let captured = ''
  const stream = new Writable({ write(chunk, _encoding, done) { captured += chunk; done() } })
  const { db, gateway } = await startStack(t, { worker: false, gatewayLog: stream })
  const account = await seedAccount(db.sql, { balance: 100000 })

  const quote = await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: { ...bearer(account.apiKey), 'x-request-id': 'caller-req-42' }, payload: quoteBody })
  t.equal(quote.headers['x-request-id'], 'caller-req-42')
  const refused = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [{ ...shipment, weight: 500 }] })
  await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: { authorization: `Bearer ${account.apiKey}x` }, payload: quoteBody })
  // Whatever a handler logs, the redaction paths keep keys and phones out.
  gateway.log.info({ authorization: `Bearer ${account.apiKey}`, api_key: account.apiKey, shipment: { recipient_phone: PHONE } }, 'careless log line')

  const lines = captured.trim().split('\n').map((line) => JSON.parse(line))
  // One line per request: a refusal at info with what an operator looks it up by, a success at debug.
  const perRequest = lines.filter((line) => line.reqId === refused.json().request_id)
  t.equal(perRequest.length, 1, 'one line for the refused placement')
  t.match(perRequest[0], { msg: 'request refused', statusCode: 400, url: '/v2/business/order', level: 30 })
  t.match(lines.find((line) => line.reqId === 'caller-req-42'), { msg: 'request completed', statusCode: 200, level: 20 }, 'a success only at debug')
  t.ok(lines.some((line) => line.reqId === 'caller-req-42'), 'the caller request id is on its lines')
  t.ok(lines.some((line) => typeof line.trace_id === 'string' && /^[0-9a-f]{32}$/.test(line.trace_id)), 'trace id on request lines')
  t.notOk(captured.includes(account.apiKey.slice(8)), 'no API key in the log')
  t.notOk(captured.includes(PHONE), 'no recipient phone in the log')
  t.ok(captured.includes('[redacted]'), 'redaction happened')
})

t.test('metrics: on the ops port for Prometheus, never on the public one', async (t) => {
  const { gateway, db } = await startStack(t)
  const account = await seedAccount(db.sql, { balance: 100000 })
  t.equal((await gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(account.apiKey), payload: quoteBody })).statusCode, 200)
  const placed = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment, shipment] })
  t.equal(placed.statusCode, 201)
  const [cancelled] = placed.json().orders
  spans.reset()
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/business/orders/${cancelled.order_id}/cancel`, headers: bearer(account.apiKey) })).statusCode, 200)
  await provider.forceFlush()
  const cancelSpans = spans.getFinishedSpans().map((span) => span.name)
  for (const step of ['order.change', 'sql lock order', 'sql update order', 'sql append event', 'sql refund wallet']) t.ok(cancelSpans.includes(step), `${step} in the cancel's trace`)
  const expected = [
    /http_server_request_duration_seconds_count\{[^}]*http_route="\/v2\/business\/order\/cost"[^}]*http_response_status_code="200"/,
    /courier_quotes_total\{[^}]*pricing_model="rate_card"[^}]*\} [1-9]/,
    /courier_placements_total\{[^}]*outcome="placed"[^}]*\} [1-9]/,
    /courier_orders_placed_total(\{[^}]*\})? [1-9]/,
    /courier_money_charged_total\{[^}]*currency="NGN"[^}]*\} [1-9]/,
    /courier_placement_job_duration_seconds_count\{[^}]*outcome="placed"/,
    /courier_queue_jobs\{[^}]*state="waiting"/,
    /courier_order_changes_total\{[^}]*event="order.cancelled"[^}]*\} 1/,
    /courier_refunds_total\{[^}]*currency="NGN"[^}]*\} 1/,
    /courier_money_refunded_total\{[^}]*currency="NGN"[^}]*\} [1-9]/,
    /courier_orders_open\{[^}]*status="created"[^}]*\} 1/,
    /courier_orders_open\{[^}]*status="assigned"[^}]*\} 0/,
  ]
  // The worker counts its placement (and times its job) after the settle the 201 waited for:
  // scraped until every sample is there, or the wait runs out, and each then checked.
  const scraped = await waitForValue(async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(), (text) => expected.every((sample) => sample.test(text)), 10_000, 100)
  for (const sample of expected) t.match(scraped.value, sample)
  t.equal((await gateway.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
})

t.test('rate limit per key, shared through Redis, failing open', async (t) => {
  const redis = await startOwnRedis(t)
  const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: redis.url, RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } })
  const account = await seedAccount(db.sql)
  const other = await seedAccount(db.sql)
  const quote = (apiKey: string) => gateway.inject({ method: 'POST', url: '/v2/business/order/cost', headers: bearer(apiKey), payload: quoteBody })
  for (let i = 0; i < 3; i++) t.equal((await quote(account.apiKey)).statusCode, 200)
  const limited = await quote(account.apiKey)
  t.equal(limited.statusCode, 429)
  const body = limited.json()
  t.match(body.message, /^Too many requests, retry in \d+ seconds$/)
  t.equal(body.statusCode, 429)
  t.equal(body.path, '/v2/business/order/cost')
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After')
  t.equal(limited.headers['ratelimit-limit'], '3')
  t.equal(limited.headers['ratelimit-remaining'], '0')
  t.equal((await quote(other.apiKey)).statusCode, 200, 'another key has its own budget')
  // A key's calls its scope refuses count against its budget too, and say so.
  const readOnly = await seedAccount(db.sql, { scopes: ['orders:read'] })
  const forbidden = await quote(readOnly.apiKey)
  t.equal(forbidden.statusCode, 403)
  t.equal(forbidden.headers['ratelimit-remaining'], '2', 'a 403 carries the key\'s budget')
  for (let i = 0; i < 2; i++) t.equal((await quote(readOnly.apiKey)).statusCode, 403)
  t.equal((await quote(readOnly.apiKey)).statusCode, 429, 'and spends it: a loop of refused calls is limited like any other')
  t.equal((await gateway.inject({ method: 'GET', url: '/v2/business/orders', headers: bearer(readOnly.apiKey) })).statusCode, 429, 'the key\'s allowed routes wait for the window too')

  await redis.stop()
  t.equal((await quote(account.apiKey)).statusCode, 200, 'without Redis the limiter lets quotes through')
})

t.test('a webhook delivery continues the trace of the transaction that wrote its event; webhook metrics', async (t) => {
  const { createServer } = await import('node:http')
  const received: string[] = []
  const receiver = createServer((request, response) => {
    received.push(String(request.headers['webhook-id']))
    request.resume().on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  t.teardown(() => receiver.close())
  const address = receiver.address()
  const port = typeof address === 'object' && address ? address.port : 0

  const { gateway, db } = await startStack(t, { webhookSender: true })
  const account = await seedAccount(db.sql, { balance: 100000, scopes: ['orders:write', 'webhooks:write'] })
  const endpoint = await gateway.inject({ method: 'POST', url: '/v2/business/webhook-endpoints', headers: bearer(account.apiKey), payload: { url: `http://127.0.0.1:${port}/hooks` } })
  t.equal(endpoint.statusCode, 201, endpoint.body)
  spans.reset()
  const placed = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.equal(placed.statusCode, 201)
  t.ok(await waitFor(async () => received.length > 0, 10_000), 'the receiver got the order.created event')
  const traced = await waitForValue(async () => {
    await provider.forceFlush()
    return spans.getFinishedSpans().find((span) => span.name === 'webhook.deliver')
  }, (span) => span !== undefined, 10_000)
  const deliver = traced.value
  t.ok(deliver, 'the sender traced the delivery')
  const place = spans.getFinishedSpans().find((span) => span.name === 'placement.place')
  t.equal(deliver?.spanContext().traceId, place?.spanContext().traceId, 'in the trace of the placement that wrote the event')
  t.equal(deliver?.attributes['courier.outcome'], 'succeeded')
  t.equal(deliver?.attributes['courier.event_id'], received[0])

  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.match(text, /courier_webhook_attempts_total\{[^}]*outcome="succeeded"[^}]*\} [1-9]/)
  t.match(text, /courier_webhook_attempt_duration_seconds_count\{[^}]*outcome="succeeded"[^}]*\} [1-9]/)
})

t.test('one trace from placement through the dispatch job and the offer to the courier\'s accept; dispatch metrics', async (t) => {
  const { gateway, db } = await startStack(t, { dispatcher: true })
  const account = await seedAccount(db.sql, { balance: 100000 })
  const rider = await onShift(gateway, db.sql, 'Traced Rider', ISLAND)
  spans.reset()
  const placed = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  t.equal(placed.statusCode, 201)
  const orderId: string = placed.json().orders[0].order_id
  const offer = await pendingOffer(db.sql, orderId)
  t.equal(offer?.courierId, rider.id, 'the rider is offered the order')
  const accepted = await gateway.inject({ method: 'POST', url: `/v2/courier/offers/${offer!.id}/accept`, headers: rider.auth })
  t.equal(accepted.statusCode, 200, accepted.body)
  await provider.forceFlush()

  const finished = spans.getFinishedSpans()
  const traceOf = (name: string) => finished.find((span) => span.name === name)?.spanContext().traceId
  const placement = traceOf('placement.place')
  t.ok(placement, 'the placement is traced')
  t.equal(traceOf('dispatch.offer'), placement, 'the dispatcher\'s offer step continues the placement\'s trace (through the dispatch job)')
  t.equal(traceOf('courier.accept'), placement, 'and so does the courier\'s accept')
  const assignedInTrace = finished.filter((span) => span.spanContext().traceId === placement).map((span) => span.name)
  t.ok(assignedInTrace.includes('order.change') && assignedInTrace.includes('sql append event'), 'the assignment\'s state-machine step and its event are in it')

  // An order offered to a second rider and then cancelled: its offer is withdrawn.
  await onShift(gateway, db.sql, 'Second Rider', ISLAND)
  const second = await gateway.inject({ method: 'POST', url: '/v2/business/order', headers: bearer(account.apiKey), payload: [shipment] })
  const secondId: string = second.json().orders[0].order_id
  t.ok(await pendingOffer(db.sql, secondId), 'a second order is offered')
  const waiting = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.match(waiting, /courier_orders_waiting_for_courier(\{[^}]*\})? 1\b/, 'offered but not accepted: it waits for a courier')
  t.match(waiting, /courier_order_wait_oldest_seconds(\{[^}]*\})? (0\.\d*[1-9]|[1-9])/, 'for more than no time')
  t.equal((await gateway.inject({ method: 'POST', url: `/v2/business/orders/${secondId}/cancel`, headers: bearer(account.apiKey) })).statusCode, 200)

  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  t.match(text, /courier_dispatch_offers_total\{[^}]*outcome="offered"[^}]*\} [1-9]/)
  t.match(text, /courier_dispatch_offers_total\{[^}]*outcome="withdrawn"[^}]*\} [1-9]/)
  t.match(text, /courier_dispatch_offers_total\{[^}]*outcome="accepted"[^}]*\} [1-9]/)
  t.match(text, /courier_dispatch_time_to_assign_seconds_count(\{[^}]*\})? [1-9]/)
  t.match(text, /courier_location_updates_total(\{[^}]*\})? [1-9]/)
  // A series per vehicle, as dispatch searches them: the two riders are bikes, and no truck is out.
  t.match(text, /courier_couriers_available\{[^}]*vehicle="bike"[^}]*\} 2\b/)
  t.match(text, /courier_couriers_available\{[^}]*vehicle="truck"[^}]*\} 0\b/)
})

t.test('a set-password token, a CSRF token, a key in a URL or a link that is its own credential reaches neither a span nor a log line', async (t) => {
  const { db } = await startStack(t, { worker: false })
  const { app } = await startConsole(t, db.env)
  const token = 'SeCrEt-set-password-token-0123456789'
  spans.reset()
  t.equal((await app.inject({ method: 'GET', url: `/console/set-password?token=${token}&lang=en` })).statusCode, 404)
  await provider.forceFlush()
  const paths = spans.getFinishedSpans().map((span) => span.attributes['url.path'])
  t.ok(paths.includes('/console/set-password?token=[redacted]&lang=en'), `the console's span has the path without the token: ${paths.join(', ')}`)
  t.notOk(JSON.stringify(spans.getFinishedSpans().map((span) => span.attributes)).includes(token), 'no span attribute holds it')

  // Links whose path is the credential: a tracking page (its PIN, the courier's position) and a proof photo.
  const trackingToken = 'TrAcKiNg-token-0123456789ab'
  const photoLink = '/v2/proof-photos/cHJvb2YvT1JELUFCQw/1795896180/SiGnAtUrE-0123456789'
  spans.reset()
  t.equal((await app.inject({ method: 'GET', url: `/t/${trackingToken}` })).statusCode, 404)
  await provider.forceFlush()
  t.ok(spans.getFinishedSpans().some((span) => span.attributes['url.path'] === '/t/[redacted]'), 'the tracking page\'s span has its path without the token')
  t.notOk(JSON.stringify(spans.getFinishedSpans().map((span) => span.attributes)).includes(trackingToken), 'no span attribute holds the token')

  // The HTTP instrumentation's attributes (webhook URLs carry keys too), through the same hook.
  const span = provider.getTracer('test').startSpan('outgoing', { attributes: { 'url.full': 'https://hooks.example.com/in?api_key=k-123&shop=7', 'http.target': '/in?sig=abc', 'url.query': 'X-Signature=s1&shop=7' } })
  redactSpanUrls(span)
  span.end()
  await provider.forceFlush()
  const outgoing = spans.getFinishedSpans().find((finished) => finished.name === 'outgoing')
  t.same(outgoing?.attributes, { 'url.full': 'https://hooks.example.com/in?api_key=[redacted]&shop=7', 'http.target': '/in?sig=[redacted]', 'url.query': 'X-Signature=[redacted]&shop=7' })
  const linked = provider.getTracer('test').startSpan('linked', { attributes: { 'url.full': `https://api.example.com${photoLink}`, 'url.path': `/t/${trackingToken}?lang=en`, 'http.target': '/v2/business/orders/ORD-1' } })
  redactSpanUrls(linked)
  linked.end()
  await provider.forceFlush()
  t.same(spans.getFinishedSpans().find((finished) => finished.name === 'linked')?.attributes,
    { 'url.full': 'https://api.example.com/v2/proof-photos/[redacted]', 'url.path': '/t/[redacted]?lang=en', 'http.target': '/v2/business/orders/ORD-1' },
    'a whole URL or a path: the credential goes, the rest and any other path stay')

  let captured = ''
  const options = loggerOptions('info')
  const stream = new Writable({ write(chunk, _encoding, done) { captured += chunk; done() } })
  const logged = Fastify({ logger: typeof options === 'object' ? { ...options, stream } : false })
  await logged.register(requestLog, { slowMs: 1000 })
  logged.get('/console/set-password', async (_request, reply) => reply.code(404).send())
  logged.get('/t/:token', async (_request, reply) => reply.code(404).send())
  logged.get('/v2/proof-photos/:key/:expires/:signature', async (_request, reply) => reply.code(403).send())
  t.teardown(() => logged.close())
  await logged.inject({ method: 'GET', url: `/console/set-password?token=${token}`, headers: { cookie: 'console_session=sess-secret' } })
  await logged.inject({ method: 'GET', url: `/t/${trackingToken}` })
  await logged.inject({ method: 'GET', url: photoLink })
  logged.log.info({ req: { headers: { cookie: 'console_session=sess-secret', authorization: 'Bearer x' } }, password: 'hunter2 hunter2', _csrf: 'csrf-secret' }, 'careless log line')
  t.match(captured, /"url":"\/console\/set-password\?token=\[redacted\]"/, 'the refused request is logged without its token')
  t.match(captured, /"url":"\/t\/\[redacted\]"/, 'a refused tracking link is logged without its token')
  t.match(captured, /"url":"\/v2\/proof-photos\/\[redacted\]"/, 'and a refused photo link without its key and signature')
  for (const secret of [token, 'sess-secret', 'hunter2', 'csrf-secret', trackingToken, 'cHJvb2YvT1JELUFCQw', 'SiGnAtUrE']) t.notOk(captured.includes(secret), `${secret.slice(0, 6)}… is in no log line`)
})

t.test('request log: a slow answer is logged as slow, a stream however long is not', async (t) => {
  let captured = ''
  const options = loggerOptions('info')
  const stream = new Writable({ write(chunk, _encoding, done) { captured += chunk; done() } })
  const logged = Fastify({ logger: typeof options === 'object' ? { ...options, stream } : false })
  // slowMs 0: every answer takes at least that long, so only the route's config decides.
  await logged.register(requestLog, { slowMs: 0 })
  logged.get('/answer', async () => ({ ok: true }))
  logged.get('/events', { config: { stream: true } }, async (_request, reply) => {
    reply.hijack()
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' })
    reply.raw.end(': bye\n\n')
  })
  t.teardown(() => logged.close())
  t.equal((await logged.inject({ method: 'GET', url: '/answer' })).statusCode, 200)
  t.equal((await logged.inject({ method: 'GET', url: '/events' })).statusCode, 200)
  const lines = captured.trim().split('\n').map((line) => JSON.parse(line))
  t.same(lines.filter((line) => line.msg === 'slow request').map((line) => line.url), ['/answer'], 'only the answer is slow')
})
