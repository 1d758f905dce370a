/*
 * Realistic Lagos examples for the document. Spectral's `oas3-valid-media-example` checks each
 * against its schema, so an example that drifts from the resource fails the lint test.
 */

const PLACEMENT_ID = '0f6b3c1e-5d2a-4c8e-9a61-2b7d4e9f1c30'
const ORDER_ID = 'ORD-7K2M9QXH4T'
const AT = '2026-11-23T09:41:07.512Z'

export const quoteRequest = {
  pickup_address: '12 Admiralty Way, Lekki Phase 1, Lagos',
  dropoff_address: '25 Adeola Odeku Street, Victoria Island, Lagos',
  weight: 2.5,
  vehicle_type: 'bike',
  pickup_state: 'Lagos',
  dropoff_state: 'Lagos',
}

export const quote = {
  price: 2800,
  distance_km: 8.42,
  currency: 'NGN',
  pricing_model: 'rate_card',
  option_id: 'opt_5W3R8N2KQ7ZD',
  option_label: 'Up to 5 kg',
  delivery_mode: 'MOTORBIKE',
  from_zone_name: 'Lekki',
  to_zone_name: 'Island',
  quote_id: 'qt_9H4T6B2XK8M1QZ3P',
  expires_at: '2026-11-23T09:56:07.000Z',
}

export const shipment = {
  pickup_address: '12 Admiralty Way, Lekki Phase 1, Lagos',
  pickup_state: 'Lagos',
  dropoff_address: '25 Adeola Odeku Street, Victoria Island, Lagos',
  dropoff_state: 'Lagos',
  recipient_name: 'Chiamaka Okafor',
  recipient_phone: '+2348031234567',
  item_name: 'Ankara fabric, 6 yards',
  weight: 2.5,
  quantity: 1,
  vehicle_type: 'bike',
  quote_id: 'qt_9H4T6B2XK8M1QZ3P',
  max_price: 3000,
}

export const placementResult = {
  status: 'Success',
  description: '1 order placed',
  currency: 'NGN',
  charged_total: 2800,
  orders: [{ order_id: ORDER_ID, price: 2800 }],
  placement_id: PLACEMENT_ID,
}

export const placementPending = { status: 'pending', placement_id: PLACEMENT_ID }

export const order = {
  order_id: ORDER_ID,
  placement_id: PLACEMENT_ID,
  livemode: true,
  status: 'assigned',
  version: 2,
  price: 2800,
  currency: 'NGN',
  pricing_model: 'rate_card',
  option_id: 'opt_5W3R8N2KQ7ZD',
  option_label: 'Up to 5 kg',
  delivery_mode: 'MOTORBIKE',
  distance_km: 8.42,
  from_zone_name: 'Lekki',
  to_zone_name: 'Island',
  // The shipment example as sent (its vehicle_type included), then what the order resolved.
  ...shipment,
  sender_name: 'Demo Shop Lagos',
  sender_phone: '+2348000000000',
  recipient_email: null,
  alternate_phone: null,
  item_category: null,
  item_description: null,
  declared_value: null,
  is_fragile: null,
  pickup_latitude: null,
  pickup_longitude: null,
  dropoff_latitude: null,
  dropoff_longitude: null,
  proof: null,
  delivery_pin: null,
  tracking_url: 'https://track.example-courier.ng/t/q1Xr8mZ0Lw3sKpT9vB2nCA',
  courier: { id: '3b9d6f2a-1c4e-4f8a-9d2b-7e5c1a0f4b63', name: 'Tunde Bakare', phone: '+2348051112233', vehicle_type: 'bike', vehicle_plate: 'LSR-482-KJ', location: { latitude: 6.4312, longitude: 3.4158, at: '2026-11-23T09:41:30.000Z' } },
  eta: { stage: 'pickup', at: '2026-11-23T09:49:10.000Z' },
  proof_of_delivery: null,
  cancellation: { cancellable: true, fee: 0, free_until: '2026-11-23T09:46:07.512Z' },
  refunded_amount: 0,
  history: [
    { status: 'created', at: AT },
    { status: 'assigned', at: '2026-11-23T09:41:07.512Z' },
  ],
  created_at: AT,
  updated_at: AT,
}

export const wallet = { balance: 97200, currency: 'NGN', livemode: true, updated_at: AT }

export const transaction = {
  id: 'txn_3F7A2C9B4E1D8A0F_42',
  type: 'debit',
  amount: 2800,
  balance_after: 97200,
  reference: null,
  placement_id: PLACEMENT_ID,
  order_id: null,
  created_at: AT,
}

export const event = {
  id: 'evt_3N7Q1W9K5T2H8M4X6B0C',
  type: 'order.assigned',
  created_at: AT,
  livemode: true,
  sequence: 2,
  data: { order },
}

export const endpointRequest = {
  url: 'https://hooks.example-shop.ng/courier',
  event_types: ['order.delivered', 'order.cancelled'],
  description: 'Order updates for the shop backend',
}

export const endpoint = {
  id: 'we_8P2K6N4R1T7Q3W9X',
  url: 'https://hooks.example-shop.ng/courier',
  event_types: ['order.delivered', 'order.cancelled'],
  description: 'Order updates for the shop backend',
  status: 'enabled',
  disabled_reason: null,
  livemode: true,
  created_at: AT,
}

export const createdEndpoint = { ...endpoint, secret: 'whsec_MfKQ9r8GKYqXWTcfeGj5k0kRwaVMDHxr7aQ5tB1i5XU=' }

export const rotatedSecret = {
  id: 'we_8P2K6N4R1T7Q3W9X',
  secret: 'whsec_3hZkU0mS6yVq2bN9dXcT1pLw8eRfGj4aYoKi7uHs5Q0=',
  previous_secret_expires_at: '2026-11-24T09:41:07.512Z',
}

export const deliveryLog = {
  data: [{
    event_id: 'evt_3N7Q1W9K5T2H8M4X6B0C',
    event_type: 'order.assigned',
    attempt: 1,
    status: 'succeeded',
    response_status: 200,
    duration_ms: 84,
    error: null,
    next_attempt_at: null,
    at: AT,
  }],
  has_more: false,
  next_cursor: null,
}

export const redelivery = { event_id: 'evt_3N7Q1W9K5T2H8M4X6B0C', endpoint_ids: ['we_8P2K6N4R1T7Q3W9X'] }

export const catalog = {
  currency: 'NGN',
  rate_card_id: 'b3c1f0d2-8e4a-4f6b-9c2d-7a1e5f3b9d04',
  version: 1,
  updated_at: AT,
  rate_cards: [{
    vehicle_type: 'bike',
    delivery_mode: 'MOTORBIKE',
    options: [{ id: 'opt_5W3R8N2KQ7ZD', label: 'Up to 5 kg', min_weight_kg: 0, max_weight_kg: 5 }],
  }],
  zones: ['Island', 'Lekki', 'Mainland', 'Ikeja'],
}

export const refusal = (statusCode: number, path: string, message: string, extra: Record<string, unknown> = {}) => ({
  statusCode,
  timestamp: AT,
  path,
  message,
  ...extra,
  request_id: 'req-4f1c2b7a9e',
})

const PLACE = '/v2/business/order'
export const insufficientBalance = refusal(400, PLACE, 'Insufficient wallet balance', { required: 5600, available: 2000, currency: 'NGN', placement_id: PLACEMENT_ID })
export const keyInProgress = refusal(409, PLACE, 'A request with this Idempotency-Key is still in progress', { placement_id: PLACEMENT_ID })
export const placementStillProcessing = refusal(503, PLACE, `Placement is still being processed; retry with the same Idempotency-Key or read GET /v2/business/placements/${PLACEMENT_ID}`, { placement_id: PLACEMENT_ID })
