import { ref, type SchemaName } from './components.js'
import { answer, commonHeaders, refusalsOf, requestIdHeader } from './responses.js'

/*
 * The courier API (DESIGN 14) under /v2/courier: a courier token (`cc_live_…`), never an API key.
 * Path keys are relative to the server URL, which ends in /v2.
 */

const courier = { security: [{ courierToken: [] }], tags: ['Couriers'], 'x-scopes': [] }
const OFFER_ID = { name: 'offer_id', in: 'path', required: true, description: 'The offer id, off_…', schema: { type: 'string', pattern: '^off_[0-9A-HJKMNP-TV-Z]{16}$' } }
const ORDER_ID = { name: 'order_id', in: 'path', required: true, description: 'The order id, ORD-…', schema: { type: 'string', pattern: '^ORD-[0-9A-HJKMNP-TV-Z]{10}$' } }
const noContent = (description: string) => ({ description, headers: commonHeaders })

/** Every courier operation's description ends by saying what it takes: a courier token, no API key scope. */
const TOKEN_NOTE = '\n\nAPI key scope: none; a courier token (cc_live_…) only.'

// What a rider's app sends, shown on /docs beside each schema.
const REQUEST_EXAMPLES = {
  ShiftRequest: { status: 'available' },
  // No `at`: it defaults to now, and a copied time would soon be more than a day old (400).
  LocationRequest: { latitude: 6.4541, longitude: 3.3947, accuracy_m: 12 },
  DeclineRequest: { reason: 'Too far for my fuel' },
  ReasonRequest: { reason: 'Recipient did not answer the phone' },
  DeliverRequest: { pin: '4821' },
} satisfies Partial<Record<SchemaName, Record<string, unknown>>>
type CourierRequest = keyof typeof REQUEST_EXAMPLES

function requestBody(schema: CourierRequest, description: string, required = true) {
  return { required, description, content: { 'application/json': { schema: ref(schema), example: REQUEST_EXAMPLES[schema] } } }
}

const order = { latitude: 6.45, longitude: 3.4 }
const courierOrder = {
  order_id: 'ORD-7K2M9QXH4T', status: 'assigned', version: 2,
  pickup: { address: '12 Admiralty Way, Lekki', state: 'Lagos', ...order, contact_name: 'Ada Stores', contact_phone: '+2348010000000' },
  dropoff: { address: '5 Allen Avenue, Ikeja', state: 'Lagos', latitude: 6.6, longitude: 3.35, recipient_name: 'Chidi Okafor', recipient_phone: '+2348020000000', alternate_phone: null },
  item: { name: 'Phone case', category: null, weight: 2, quantity: 1, is_fragile: null },
  proof: { pin_required: true, photo_required: false },
  history: [{ status: 'created', at: '2026-11-25T10:00:00.000Z' }, { status: 'assigned', at: '2026-11-25T10:00:09.000Z' }],
}

function move(operationId: string, summary: string, description: string, request: CourierRequest | null) {
  return {
    post: {
      operationId, summary, description: description + TOKEN_NOTE, ...courier, parameters: [ORDER_ID],
      ...(request ? { requestBody: requestBody(request, 'What the move needs', request === 'ReasonRequest') } : {}),
      responses: { 200: answer('The order after the move', 'CourierOrder', courierOrder), ...refusalsOf(400, 404, 409) },
    },
  }
}

/** A delivery: JSON `{ pin }`, or multipart/form-data with the PIN and a photo from the door. */
function deliver() {
  const operation = move('deliverOrder', 'Delivered', 'picked_up → delivered. An order whose shipment asked for `proof.pin` needs the recipient\'s PIN (400 when wrong; the fifth wrong PIN locks the delivery: 409); one that asked for `proof.photo` needs a photo, sent as multipart/form-data: JPEG or PNG by its bytes, at most 5 MB (413 beyond).', 'DeliverRequest')
  const multipart = {
    schema: {
      type: 'object',
      properties: {
        pin: { type: 'string', maxLength: 8, description: 'The PIN the recipient gave' },
        photo: { type: 'string', format: 'binary', description: 'The photo at the door: JPEG or PNG, at most 5 MB' },
      },
    },
    encoding: { photo: { contentType: 'image/jpeg, image/png' } },
  }
  const json = requestBody('DeliverRequest', 'The PIN, and the photo when one is asked for', false)
  return { post: { ...operation.post, requestBody: { ...json, content: { ...json.content, 'multipart/form-data': multipart } } } }
}

export const courierOperations = {
  '/courier/me': {
    get: {
      operationId: 'getCourier', summary: 'Who I am, my shift and my orders', description: 'The courier, their shift status, last reported position and the orders they hold.' + TOKEN_NOTE, ...courier,
      responses: { 200: answer('The courier', 'CourierProfile', { courier_id: '6f1c2a4e-8b3d-4c7a-9e21-5d0b7f3a9c12', name: 'Musa Bello', phone: '+2348090000000', vehicle_type: 'bike', vehicle_plate: null, max_weight_kg: 20, shift: 'available', location: { latitude: 6.45, longitude: 3.4, at: '2026-11-25T10:00:00.000Z' }, active_orders: [{ order_id: 'ORD-7K2M9QXH4T', status: 'assigned' }] }) },
    },
  },
  '/courier/shift': {
    post: {
      operationId: 'setShift', summary: 'Go available or offline', description: 'Available couriers who have reported a position in the last COURIER_STALE_S seconds are offered orders. Going offline declines any offer pending for the courier (reason `went off shift`), so its order goes to the next courier at once.' + TOKEN_NOTE, ...courier,
      requestBody: requestBody('ShiftRequest', '`available` or `offline`'),
      responses: { 200: answer('The shift now', 'Shift', { shift: 'available' }), ...refusalsOf(400) },
    },
  },
  '/courier/location': {
    post: {
      operationId: 'reportLocation', summary: 'Report where I am', description: 'At most one a second (429 beyond). Kept in Redis: the last fix shows on the order and feeds its ETA. `at` (when the fix was taken) defaults to now; a time later than the ping\'s arrival is taken as now, one more than 24 hours before it is refused (400), and a fix older than the one kept is answered 204 and dropped (the position is the newest fix).' + TOKEN_NOTE, ...courier,
      requestBody: requestBody('LocationRequest', 'The position'),
      // Its own one-a-second gate, not the per-courier request limit: no RateLimit-* headers.
      responses: { 204: { description: 'Recorded', headers: requestIdHeader }, ...refusalsOf(400) },
    },
  },
  '/courier/offers': {
    get: {
      operationId: 'listOffers', summary: 'My pending offers', description: 'Offers that have not expired. No recipient, price or PIN until the order is accepted.' + TOKEN_NOTE, ...courier,
      responses: { 200: answer('The pending offers', 'CourierOfferList', { data: [] }) },
    },
  },
  '/courier/stream': {
    get: {
      operationId: 'streamOffers', summary: 'Offers as they happen (Server-Sent Events)', ...courier,
      description: 'A `text/event-stream`: `offer` (an offer as in GET /courier/offers), `offer_withdrawn`, `order_cancelled`, `order_unassigned` (an order the courier held, handed back to dispatch: `{order_id, reason}`) and `order_assigned` (an order an operator gave the courier by hand: `{order_id}`; read it with GET /courier/orders/{order_id}) events, and a comment every 15 s. On connecting, the offers already pending come first as `offer` events, then the comment `connected`; an offer made at that moment may come twice (key on `offer_id`). Each event has an `id`: a stream opened again with the last one as `Last-Event-ID` (as EventSource does) is told the events it missed, in order, before `connected` (the last 100 of the courier, kept an hour); when the log no longer holds that event, a `resync` event comes first: read GET /courier/me, /courier/orders and /courier/offers again.' + TOKEN_NOTE,
      parameters: [{ name: 'Last-Event-ID', in: 'header', required: false, description: 'The `id` of the last event this app heard: the events after it come first', schema: { type: 'string', example: '1764389012345-0' } }],
      responses: { 200: { description: 'The stream', content: { 'text/event-stream': { schema: { type: 'string' } } } } },
    },
  },
  '/courier/offers/{offer_id}/accept': {
    post: {
      operationId: 'acceptOffer', summary: 'Accept an offer', description: 'The order is assigned to the courier; 409 when the offer has expired or was withdrawn.' + TOKEN_NOTE, ...courier, parameters: [OFFER_ID],
      responses: { 200: answer('The order, now assigned', 'CourierOrder', courierOrder), ...refusalsOf(400, 404, 409) },
    },
  },
  '/courier/offers/{offer_id}/decline': {
    post: {
      operationId: 'declineOffer', summary: 'Decline an offer', description: 'The order is offered to the next courier.' + TOKEN_NOTE, ...courier, parameters: [OFFER_ID],
      requestBody: requestBody('DeclineRequest', 'Why, optionally', false),
      responses: { 204: noContent('Declined'), ...refusalsOf(400, 404, 409) },
    },
  },
  '/courier/orders': {
    get: {
      operationId: 'listMyOrders', summary: 'The orders I hold', description: 'Each order assigned to the courier, picked up, or failed and to be returned, in full as the accept answered it (the recipient included), oldest assignment first. An app that restarts mid-delivery reads its work again here.' + TOKEN_NOTE, ...courier,
      responses: { 200: answer('The orders held', 'CourierOrderList', { data: [courierOrder] }) },
    },
  },
  '/courier/orders/{order_id}': {
    get: {
      operationId: 'getMyOrder', summary: 'One order I hold', description: 'The order in full, while the courier holds it. Another courier\'s order, one only offered, or one delivered, returned or handed back is a 404: what the courier no longer holds they no longer see.' + TOKEN_NOTE, ...courier, parameters: [ORDER_ID],
      responses: { 200: answer('The order', 'CourierOrder', courierOrder), ...refusalsOf(404) },
    },
  },
  '/courier/orders/{order_id}/pickup': move('pickUpOrder', 'Picked up', 'assigned → picked_up.', null),
  '/courier/orders/{order_id}/deliver': deliver(),
  '/courier/orders/{order_id}/fail': move('failOrder', 'Could not deliver', 'picked_up → failed, with a reason.', 'ReasonRequest'),
  '/courier/orders/{order_id}/unassign': move('unassignOrder', 'Give the order back', 'assigned → created, with a reason; it is offered to the next courier.', 'ReasonRequest'),
  '/courier/orders/{order_id}/return': move('returnOrder', 'Returned to the sender', 'failed → returned.', null),
}
