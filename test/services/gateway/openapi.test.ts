import t from 'tap'
import { startStack } from '../../helpers/stack.js'

t.test('the OpenAPI document is served without a key and describes the request schemas', async (t) => {
  const { gateway } = await startStack(t, { worker: false })
  const response = await gateway.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(response.statusCode, 200)
  const document = response.json()
  t.equal(document.openapi, '3.1.0')
  const shipment = document.paths['/business/order'].post.requestBody.content['application/json'].schema
  t.equal(shipment.maxItems, 100)
  t.same(shipment.items.required, ['dropoff_address', 'dropoff_state', 'recipient_name', 'recipient_phone', 'item_name', 'weight', 'quantity'])
  t.same(shipment.items.properties.vehicle_type.enum, ['bike', 'bus_van', 'truck'])
  const quote = document.paths['/business/order/cost'].post
  t.equal(quote.requestBody.content['application/json'].schema.properties.weight.minimum, 0.1)
  t.ok(quote.responses['200'].content['application/json'].schema.properties.pricing_model)
})

t.test('every operation the OpenAPI document lists is a route the gateway serves, webhooks included', async (t) => {
  const { gateway } = await startStack(t, { worker: false })
  const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
  const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => ({ method: method.toUpperCase(), url: `/v2${path.replace(/\{(\w+)\}/g, ':$1')}` })))
  for (const operation of operations) t.ok(gateway.hasRoute(operation), `${operation.method} ${operation.url} is served`)
  const documented = new Set(operations.map((operation) => `${operation.method} ${operation.url}`))
  for (const operation of ['POST /v2/business/webhook-endpoints', 'GET /v2/business/webhook-endpoints', 'DELETE /v2/business/webhook-endpoints/:id',
    'POST /v2/business/webhook-endpoints/:id/rotate-secret', 'GET /v2/business/webhook-endpoints/:id/deliveries', 'POST /v2/business/events/:event_id/redeliver']) {
    t.ok(documented.has(operation), `${operation} is documented`)
  }
  const create = document.paths['/business/webhook-endpoints'].post
  t.same(create.requestBody.content['application/json'].schema.required, ['url'])
  t.ok(create.responses['201'].content['application/json'].schema.properties.secret, 'the created endpoint shows its secret')
  t.notOk(document.paths['/business/webhook-endpoints'].get.responses['200'].content['application/json'].schema.properties.data.items.properties.secret, 'a listed endpoint has none')
})
