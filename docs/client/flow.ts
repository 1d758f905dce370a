// A typed client in a few lines: the types come from the served OpenAPI document.
//
//   npx openapi-typescript http://localhost:3000/openapi.json -o api.d.ts
//   npm install openapi-fetch
//
// test/services/gateway/openapi-client.test.ts generates api.d.ts from the document, compiles
// this file under `tsc --strict` and runs it against a live gateway.
import createClient from 'openapi-fetch'
import type { paths } from './api.js'

export async function quoteAndPlace(baseUrl: string, apiKey: string) {
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } })

  const catalog = await api.GET('/business/rate-cards')
  if (!catalog.data) throw new Error(`catalog: ${catalog.error?.message}`)
  const bike = catalog.data.rate_cards.find((group) => group.vehicle_type === 'bike')
  if (!bike) throw new Error('this rate card has no bikes')

  const quote = await api.POST('/business/order/cost', {
    body: {
      pickup_address: '12 Admiralty Way, Lekki Phase 1, Lagos',
      dropoff_address: '25 Adeola Odeku Street, Victoria Island, Lagos',
      weight: 2.5,
      vehicle_type: 'bike',
    },
  })
  if (!quote.data) throw new Error(`quote: ${quote.error?.message}`)

  const placed = await api.POST('/business/order', {
    params: { header: { 'Idempotency-Key': `flow-${Date.now()}` } },
    body: [{
      pickup_address: '12 Admiralty Way, Lekki Phase 1, Lagos',
      dropoff_address: '25 Adeola Odeku Street, Victoria Island, Lagos',
      dropoff_state: 'Lagos',
      recipient_name: 'Chiamaka Okafor',
      recipient_phone: '+2348031234567',
      item_name: 'Ankara fabric, 6 yards',
      weight: 2.5,
      quantity: 1,
      vehicle_type: 'bike',
      quote_id: quote.data.quote_id,
      max_price: quote.data.price,
    }],
  })
  if (!placed.data) throw new Error(`placement ${placed.error?.placement_id}: ${placed.error?.message}`)

  const placement = await api.GET('/business/placements/{placement_id}', { params: { path: { placement_id: placed.data.placement_id } } })
  if (placement.response.status !== 201 || !placement.data || !('orders' in placement.data)) throw new Error('the placement is not settled')

  const orderId = placement.data.orders[0].order_id
  const order = await api.GET('/business/orders/{order_id}', { params: { path: { order_id: orderId } } })
  if (!order.data) throw new Error(`order: ${order.error?.message}`)
  return { quotedPrice: quote.data.price, charged: placed.data.charged_total, order: order.data }
}
