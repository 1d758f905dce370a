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
