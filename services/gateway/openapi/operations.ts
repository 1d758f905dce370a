import { ORDER_EVENT_TYPES, ORDER_STATUSES } from '../../../shared/courier.js'
import { SCOPES_FOR, type Access } from '../access.js'
import { ref, type SchemaName } from './components.js'
import * as example from './examples.js'
import { answer, commonHeaders, refusalsOf, replayedHeader, requestIdHeader } from './responses.js'

/*
 * Every operation of the public API under /v2, in the order an integrator meets them. The path
 * keys are relative to the server URL, which ends in /v2.
 */

// A bearer key carries scopes the document cannot list in `security` (only OAuth flows can):
// each operation names the ones it takes in `x-scopes` and in its description. The gateway
// enforces `x-scopes` itself (app.ts), so this is the one place a route's scope is decided.
function access(kind: Access, description: string) {
  const scopes = SCOPES_FOR[kind]
  return { security: [{ apiKey: [] }], 'x-scopes': scopes, description: `${description}\n\nAPI key scope: ${scopes.join(' or ')}.` }
}

function body(schema: SchemaName, description: string, sample: unknown, required = true) {
  return { required, description, content: { 'application/json': { schema: ref(schema), example: sample } } }
}

function query(name: string, description: string, schema: Record<string, unknown>) {
  return { name, in: 'query', required: false, description, schema }
}

function path(name: string, description: string, schema: Record<string, unknown>) {
  return { name, in: 'path', required: true, description, schema }
}

const LIMIT = query('limit', 'Page size, 1 to 100', { type: 'integer', minimum: 1, maximum: 100, default: 20 })
const CURSOR = query('cursor', 'The next_cursor of the previous page (opaque)', { type: 'string' })
const ORDER_ID = path('order_id', 'The order id, ORD-…', { type: 'string', pattern: '^ORD-[0-9A-HJKMNP-TV-Z]{10}$', example: 'ORD-7K2M9QXH4T' })
const EVENT_ID = path('event_id', 'The event id, evt_…', { type: 'string', pattern: '^evt_[0-9A-HJKMNP-TV-Z]{20}$', example: 'evt_3N7Q1W9K5T2H8M4X6B0C' })
const ENDPOINT_ID = path('id', 'The webhook endpoint id, we_…', { type: 'string', pattern: '^we_[0-9A-HJKMNP-TV-Z]{16}$', example: 'we_8P2K6N4R1T7Q3W9X' })
const PLACEMENT_ID = path('placement_id', 'The placement id every placement answer carries', { type: 'string', format: 'uuid', example: '0f6b3c1e-5d2a-4c8e-9a61-2b7d4e9f1c30' })
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key', in: 'header', required: false,
  description: 'Any unique string up to 255 characters. A retry with the same key and body gets the first answer and is never charged twice; for 24 hours by default.',
  schema: { type: 'string', minLength: 1, maxLength: 255 }, example: 'order-2026-11-23-0001',
}

const list = (name: SchemaName, text: string, sample: unknown) => answer(text, name, { data: [sample], has_more: false, next_cursor: null })

export const operations = {
  '/business/rate-cards': {
    get: {
      operationId: 'getCatalog', tags: ['Catalog'], ...access('write', 'The vehicle types, weight bands (option ids) and zones of the rate card that prices this business. Send a `bus_van` or `truck` option id with `vehicle_type`; bikes are banded by weight.'),
      summary: 'Read the catalog',
      responses: { 200: answer('The catalog', 'Catalog', example.catalog) },
    },
  },
  '/business/order/cost': {
    post: {
      operationId: 'createQuote', tags: ['Quotes'], ...access('write', 'Prices one delivery: with `vehicle_type`, by the rate card, zone to zone (a point outside every zone is a 400); without it, by distance. The answer carries a `quote_id` that holds this price until `expires_at`: send it with the shipment to be charged exactly this.'),
      summary: 'Quote one shipment',
      requestBody: body('QuoteRequest', 'The delivery to price', example.quoteRequest),
      responses: { 200: answer('The quote', 'Quote', example.quote), ...refusalsOf(400) },
    },
  },
  '/business/order': {
    post: {
      operationId: 'placeOrders', tags: ['Placements'], ...access('write', 'All or nothing: either every shipment becomes an order and the wallet is debited once for the total, or nothing is placed and nothing is charged. `placement_id` names the placement on its 201 and on the refusals and 503s of the placement itself (not on a validation 400 or an authentication refusal); with an `Idempotency-Key`, a retry gets the same answer and is never charged twice.'),
      summary: 'Place 1 to 100 shipments, paid from the wallet',
      parameters: [IDEMPOTENCY_KEY],
      requestBody: body('PlacementRequest', 'The shipments', [example.shipment]),
      responses: {
        201: answer('Orders placed', 'PlacementResult', example.placementResult, replayedHeader),
        400: answer('The body is invalid (`errors` lists every violation, with its `[index]`), or the placement was refused: a shipment could not be priced, or the wallet cannot pay for all of them (`required`, `available`). Nothing was placed or charged; a refused placement carries `placement_id`', 'Error', example.insufficientBalance, replayedHeader),
        409: answer('A request with this Idempotency-Key is still in progress: retry it shortly for its answer', 'Error', example.keyInProgress),
        ...refusalsOf(422),
        503: answer('The outcome is not known yet, or the placement was not processed (nothing was charged): `placement_id` names it; retry with the same Idempotency-Key, which never charges twice, or read GET /business/placements/{placement_id}, and never retry without a key after this answer. A 503 before the body is read (the API key could not be checked) has no `placement_id` and placed nothing', 'Error', example.placementStillProcessing),
      },
    },
  },
  '/business/placements/{placement_id}': {
    get: {
      operationId: 'getPlacement', tags: ['Placements'], ...access('read', 'The same answer the placement gave (201, 400, or the 503 of a placement that was not processed), or 202 while it is still being processed.'), parameters: [PLACEMENT_ID],
      summary: 'Read a placement',
      responses: {
        201: answer('Orders placed', 'PlacementResult', example.placementResult),
        202: answer('Still being processed', 'PlacementPending', example.placementPending),
        ...refusalsOf(400, 404),
      },
    },
  },
  '/business/orders': {
    get: {
      operationId: 'listOrders', tags: ['Orders'], ...access('read', 'Newest first, by keyset: a page never repeats or skips an order while new ones arrive. Filter by status, placement and creation time.'),
      summary: 'List orders, newest first',
      parameters: [
        query('status', 'One status or a comma list', { type: 'string', example: ORDER_STATUSES.slice(0, 2).join(',') }),
        query('placement_id', 'Orders of one placement', { type: 'string', format: 'uuid' }),
        query('created_gte', 'Created at or after (ISO 8601)', { type: 'string', format: 'date-time' }),
        query('created_lt', 'Created before (ISO 8601)', { type: 'string', format: 'date-time' }),
        LIMIT, CURSOR,
      ],
      responses: { 200: list('OrderList', 'A page of orders', example.order), ...refusalsOf(400) },
    },
  },
  '/business/orders/{order_id}': {
    get: {
      operationId: 'getOrder', tags: ['Orders'], ...access('read', 'The order with its status, history, courier and what a cancel would cost now.'), parameters: [ORDER_ID],
      summary: 'Read an order',
      responses: { 200: answer('The order', 'Order', example.order), ...refusalsOf(404) },
    },
  },
  '/business/orders/{order_id}/proof/photo': {
    get: {
      operationId: 'getDeliveryPhoto', tags: ['Orders'], ...access('read', "The courier's photo at the door (`proof_of_delivery.photo_url`): a link to it that needs no API key for 15 minutes, so it can go straight into an `<img>` or a support ticket. 404 when the order has no photo, or its personal data was erased."), parameters: [ORDER_ID],
      summary: 'Get the delivery photo',
      responses: {
        200: answer('Where the photo is for the next 15 minutes', 'PhotoLink', { url: 'https://api.courier.example/v2/proof-photos/cHJvb2YvT1JELTdLMk05UVhINFQvNTU1ZTI0NWY4YjA3ODg1ZDIzNWZhMzA4LmpwZw/1795624220/EXhy7txaV39NvHo24QyfKyxjlL8fswmDD6SMnK6v2LU', expires_at: '2026-11-25T10:15:00.000Z' }),
        ...refusalsOf(404),
      },
    },
  },
  '/proof-photos/{key}/{expires}/{signature}': {
    get: {
      operationId: 'openDeliveryPhoto', tags: ['Orders'], security: [], 'x-scopes': [],
      summary: 'Open a delivery photo link',
      description: 'A link from GET /business/orders/{order_id}/proof/photo: the link is the permission until it expires (410 after). Deployments that keep photos on S3 hand out its presigned links instead.\n\nAPI key scope: none; no API key.',
      parameters: [
        path('key', 'Which photo', { type: 'string', pattern: '^[A-Za-z0-9_-]+$' }),
        path('expires', 'Unix time the link ends', { type: 'string', pattern: '^[0-9]{1,12}$' }),
        path('signature', 'HMAC-SHA256 of the two', { type: 'string', pattern: '^[A-Za-z0-9_-]+$' }),
      ],
      responses: {
        // Outside the rate limits, which count by key: the signed link is the permission.
        200: { description: 'The photo', headers: requestIdHeader, content: { 'image/jpeg': { schema: { type: 'string', format: 'binary' } }, 'image/png': { schema: { type: 'string', format: 'binary' } } } },
        ...refusalsOf(404, 410),
      },
    },
  },
  '/business/orders/{order_id}/cancel': {
    post: {
      operationId: 'cancelOrder', tags: ['Orders'], ...access('write', 'Free until a courier is assigned and for a short window after; then a fee. The refund (price − fee) goes back to the wallet in the same transaction. Cancelling a cancelled order answers it again.'), parameters: [ORDER_ID],
      summary: 'Cancel an order',
      requestBody: body('CancelRequest', 'Why (optional)', { reason: 'Customer changed the delivery date' }, false),
      responses: { 200: answer('The order, cancelled', 'Order', { ...example.order, status: 'cancelled' }), ...refusalsOf(400, 404, 409) },
    },
  },
  '/business/wallet': {
    get: {
      operationId: 'getWallet', tags: ['Wallet'], ...access('read', 'The balance of the wallet this key pays from (the test wallet for a ck_test_ key). It is funded by the operator; every movement is a transaction.'),
      summary: 'Read the wallet',
      responses: { 200: answer('The wallet', 'Wallet', example.wallet), ...refusalsOf(404) },
    },
  },
  '/business/wallet/transactions': {
    get: {
      operationId: 'listWalletTransactions', tags: ['Wallet'], ...access('read', 'Every credit, debit and refund with the balance after it; replaying them gives the balance.'),
      summary: 'The wallet statement, newest first',
      parameters: [query('type', 'credit, debit, refund, or a comma list', { type: 'string', example: 'debit,refund' }), LIMIT, CURSOR],
      responses: { 200: list('TransactionList', 'A page of ledger entries', example.transaction), ...refusalsOf(400) },
    },
  },
  '/business/events': {
    get: {
      operationId: 'listEvents', tags: ['Events'], ...access('read', 'In sequence order, gapless per business and mode: poll with the last sequence seen to miss nothing, with or without webhooks.'),
      summary: 'Events after a sequence number',
      parameters: [
        query('after', 'The last sequence already seen', { type: 'integer', minimum: 0, default: 0 }),
        query('type', 'One event type or a comma list', { type: 'string', example: ORDER_EVENT_TYPES[0] }),
        LIMIT,
      ],
      responses: { 200: answer('A page of events', 'EventList', { data: [example.event], has_more: false }), ...refusalsOf(400) },
    },
  },
  '/business/events/{event_id}': {
    get: {
      operationId: 'getEvent', tags: ['Events'], ...access('read', 'One event, as it was delivered to webhook endpoints: the order as it was at that change.'), parameters: [EVENT_ID],
      summary: 'Read an event',
      responses: { 200: answer('The event', 'Event', example.event), ...refusalsOf(404) },
    },
  },
  '/business/events/{event_id}/redeliver': {
    post: {
      operationId: 'redeliverEvent', tags: ['Webhooks'], ...access('webhooks', 'Queues one more delivery to every enabled endpoint that takes its type.'), parameters: [EVENT_ID],
      summary: 'Deliver an event again',
      responses: { 202: answer('Queued', 'Redelivery', example.redelivery), ...refusalsOf(404) },
    },
  },
  '/business/webhook-endpoints': {
    post: {
      operationId: 'createWebhookEndpoint', tags: ['Webhooks'], ...access('webhooks', 'At most 10 per business and mode. The `whsec_` secret is shown only in this answer; deliveries are signed with it as the Standard Webhooks specification says.'),
      summary: 'Register a webhook endpoint',
      requestBody: body('WebhookEndpointRequest', 'The endpoint', example.endpointRequest),
      responses: { 201: answer('The endpoint, with its secret', 'CreatedWebhookEndpoint', example.createdEndpoint), ...refusalsOf(400, 409) },
    },
    get: {
      operationId: 'listWebhookEndpoints', tags: ['Webhooks'], ...access('webhooks', 'Without their secrets.'),
      summary: 'List the webhook endpoints',
      // It takes no query parameter and, a list route, refuses any rather than ignore it (400).
      responses: { 200: answer('The endpoints', 'WebhookEndpointList', { data: [example.endpoint] }), ...refusalsOf(400) },
    },
  },
  '/business/webhook-endpoints/{id}': {
    delete: {
      operationId: 'deleteWebhookEndpoint', tags: ['Webhooks'], ...access('webhooks', 'With its delivery log; nothing more is sent to it.'), parameters: [ENDPOINT_ID],
      summary: 'Delete a webhook endpoint',
      responses: { 204: { description: 'Deleted', headers: commonHeaders }, ...refusalsOf(404) },
    },
  },
  '/business/webhook-endpoints/{id}/rotate-secret': {
    post: {
      operationId: 'rotateWebhookSecret', tags: ['Webhooks'], ...access('webhooks', 'A new secret; the old one keeps signing alongside it for 24 hours, so the receiver can switch without losing a delivery.'), parameters: [ENDPOINT_ID],
      summary: 'Rotate an endpoint\'s secret',
      requestBody: body('RotateSecretRequest', 'Whether the old secret stops at once (optional)', { expire_previous_now: true }, false),
      responses: { 200: answer('The new secret', 'RotatedSecret', example.rotatedSecret), ...refusalsOf(400, 404) },
    },
  },
  '/business/webhook-endpoints/{id}/deliveries': {
    get: {
      operationId: 'listWebhookDeliveries', tags: ['Webhooks'], ...access('webhooks', 'One entry per attempt, newest first.'), parameters: [ENDPOINT_ID, LIMIT, CURSOR],
      summary: 'The delivery log of an endpoint',
      responses: { 200: answer('A page of attempts', 'DeliveryLog', example.deliveryLog), ...refusalsOf(400, 404) },
    },
  },
  '/business/sandbox/orders/{order_id}/advance': {
    post: {
      operationId: 'advanceSandboxOrder', tags: ['Sandbox'], ...access('write', 'Test keys (`ck_test_`) only; a live key gets 404. Moves the order to the next allowed status at once, with its event and webhooks, as the sandbox courier would.'), parameters: [ORDER_ID],
      summary: 'Move a test order one step',
      requestBody: body('SandboxAdvanceRequest', 'The status to move to', { to: 'picked_up' }),
      responses: { 200: answer('The order, moved', 'Order', { ...example.order, livemode: false, status: 'picked_up' }), ...refusalsOf(400, 404, 409) },
    },
  },
}
