import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { errorBodySchema } from '../../../shared/schemas/error.js'
import { catalogSchema } from '../../../shared/schemas/catalog.js'
import { cancelRequestSchema, sandboxAdvanceSchema, eventListSchema, eventSchema, orderListSchema, orderSchema, transactionListSchema, walletSchema } from '../../../shared/schemas/order.js'
import { placementResultSchema } from '../../../shared/schemas/placement.js'
import { ORDER_EVENT_TYPES, ORDER_STATUSES } from '../../../shared/courier.js'
import { quoteRequestSchema, quoteResponseSchema } from '../../../shared/schemas/quote.js'
import { createdEndpointSchema, deliveryLogSchema, endpointListSchema, endpointRequestSchema, redeliverySchema, rotatedSecretSchema } from '../../../shared/schemas/webhook.js'
import { placementRequestSchema } from '../../../shared/schemas/shipment.js'

// zod's own JSON Schema output: the request schemas stay the single source of every field.
const jsonSchema = (schema: z.ZodType) => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  return rest
}

function json(schema: z.ZodType, description: string) {
  return { description, content: { 'application/json': { schema: jsonSchema(schema) } } }
}

function errors(...codes: number[]) {
  return Object.fromEntries(codes.map((code) => [String(code), { $ref: '#/components/responses/Error' }]))
}

function query(name: string, description: string, schema: Record<string, unknown>) {
  return { name, in: 'query', required: false, description, schema }
}

const LIMIT = query('limit', 'Page size', { type: 'integer', minimum: 1, maximum: 100, default: 20 })
const CURSOR = query('cursor', 'next_cursor of the previous page (opaque)', { type: 'string' })
const EVENT_ID = { name: 'event_id', in: 'path', required: true, schema: { type: 'string', pattern: '^evt_[0-9A-HJKMNP-TV-Z]{20}$' } }
const ENDPOINT_ID = { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^we_[0-9A-HJKMNP-TV-Z]{16}$' } }
const ORDER_ID = { name: 'order_id', in: 'path', required: true, schema: { type: 'string', pattern: '^ORD-[0-9A-HJKMNP-TV-Z]{10}$' } }

/** The OpenAPI 3.1 document of the public API, built once from the resource schemas. */
export function openApiDocument() {
  const auth = [{ apiKey: [] }]
  const webhookAuth = [{ apiKey: ['webhooks:write'] }]
  return {
    openapi: '3.1.0',
    info: { title: 'Courier delivery ordering API', version: '2' },
    servers: [{ url: '/v2' }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key (ck_live_… or, for the sandbox, ck_test_…): GET routes take orders:read or orders:write; webhook endpoints and redelivery webhooks:write; the others orders:write' } },
      responses: { Error: json(errorBodySchema, 'The error body') },
    },
    paths: {
      '/business/order/cost': {
        post: {
          summary: 'Quote one shipment', security: auth,
          requestBody: { required: true, ...json(quoteRequestSchema, 'Quote request') },
          responses: { 200: json(quoteResponseSchema, 'Quote'), ...errors(400, 401, 403, 413, 415, 429, 503) },
        },
      },
      '/business/order': {
        post: {
          summary: 'Place 1 to 100 shipments, paid from the wallet', security: auth,
          parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }],
          requestBody: { required: true, ...json(placementRequestSchema, 'Shipments') },
          responses: { 201: json(placementResultSchema, 'Orders placed'), ...errors(400, 401, 403, 409, 413, 415, 422, 429, 503) },
        },
      },
      '/business/placements/{placement_id}': {
        get: {
          summary: 'Read a placement', security: auth,
          parameters: [{ name: 'placement_id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } }],
          responses: { 201: json(placementResultSchema, 'Orders placed'), 202: { description: 'Still running' }, ...errors(400, 401, 403, 404, 503) },
        },
      },
      '/business/orders': {
        get: {
          summary: 'List orders, newest first', security: auth,
          parameters: [
            query('status', 'One status or a comma list', { type: 'string', example: ORDER_STATUSES.slice(0, 2).join(',') }),
            query('placement_id', 'Orders of one placement', { type: 'string', format: 'uuid' }),
            query('created_gte', 'Created at or after (ISO 8601)', { type: 'string', format: 'date-time' }),
            query('created_lt', 'Created before (ISO 8601)', { type: 'string', format: 'date-time' }),
            LIMIT, CURSOR,
          ],
          responses: { 200: json(orderListSchema, 'A page of orders'), ...errors(400, 401, 403, 429, 503) },
        },
      },
      '/business/orders/{order_id}': {
        get: {
          summary: 'Read an order', security: auth, parameters: [ORDER_ID],
          responses: { 200: json(orderSchema, 'The order'), ...errors(401, 403, 404, 429, 503) },
        },
      },
      '/business/orders/{order_id}/cancel': {
        post: {
          summary: 'Cancel an order; the refund (price − fee) goes back to the wallet', security: auth, parameters: [ORDER_ID],
          requestBody: { required: false, ...json(cancelRequestSchema, 'Why (optional)') },
          responses: { 200: json(orderSchema, 'The order, cancelled'), ...errors(400, 401, 403, 404, 409, 413, 415, 429, 503) },
        },
      },
      '/business/sandbox/orders/{order_id}/advance': {
        post: {
          summary: 'Test keys only: move a test order one allowed step at once (a live key gets 404)', security: auth, parameters: [ORDER_ID],
          requestBody: { required: true, ...json(sandboxAdvanceSchema, 'The status to move to') },
          responses: { 200: json(orderSchema, 'The order, moved'), ...errors(400, 401, 403, 404, 409, 413, 415, 429, 503) },
        },
      },
      '/business/wallet': {
        get: { summary: 'Read the wallet', security: auth, responses: { 200: json(walletSchema, 'The wallet'), ...errors(401, 403, 429, 503) } },
      },
      '/business/wallet/transactions': {
        get: {
          summary: 'The wallet statement, newest first', security: auth,
          parameters: [query('type', 'credit, debit, refund, or a comma list', { type: 'string' }), LIMIT, CURSOR],
          responses: { 200: json(transactionListSchema, 'A page of ledger entries'), ...errors(400, 401, 403, 429, 503) },
        },
      },
      '/business/events': {
        get: {
          summary: 'Events after a sequence number, in sequence order', security: auth,
          parameters: [
            query('after', 'The last sequence already seen', { type: 'integer', minimum: 0, default: 0 }),
            query('type', 'One event type or a comma list', { type: 'string', example: ORDER_EVENT_TYPES[0] }),
            LIMIT,
          ],
          responses: { 200: json(eventListSchema, 'A page of events'), ...errors(400, 401, 403, 429, 503) },
        },
      },
      '/business/events/{event_id}': {
        get: {
          summary: 'Read an event', security: auth,
          parameters: [EVENT_ID],
          responses: { 200: json(eventSchema, 'The event'), ...errors(401, 403, 404, 429, 503) },
        },
      },
      '/business/events/{event_id}/redeliver': {
        post: {
          summary: 'Queue one more delivery of an event to every enabled endpoint that takes its type', security: webhookAuth,
          parameters: [EVENT_ID],
          responses: { 202: json(redeliverySchema, 'Queued'), ...errors(401, 403, 404, 429, 503) },
        },
      },
      '/business/webhook-endpoints': {
        post: {
          summary: 'Register a webhook endpoint (at most 10); its secret is shown only in this answer', security: webhookAuth,
          requestBody: { required: true, ...json(endpointRequestSchema, 'The endpoint') },
          responses: { 201: json(createdEndpointSchema, 'The endpoint, with its secret'), ...errors(400, 401, 403, 409, 413, 415, 429, 503) },
        },
        get: {
          summary: 'List the webhook endpoints (no secrets)', security: webhookAuth,
          responses: { 200: json(endpointListSchema, 'The endpoints'), ...errors(400, 401, 403, 429, 503) },
        },
      },
      '/business/webhook-endpoints/{id}': {
        delete: {
          summary: 'Delete a webhook endpoint and its delivery log', security: webhookAuth, parameters: [ENDPOINT_ID],
          responses: { 204: { description: 'Deleted' }, ...errors(401, 403, 404, 429, 503) },
        },
      },
      '/business/webhook-endpoints/{id}/rotate-secret': {
        post: {
          summary: 'A new secret; the old one keeps signing alongside it for 24 hours', security: webhookAuth, parameters: [ENDPOINT_ID],
          responses: { 200: json(rotatedSecretSchema, 'The new secret'), ...errors(401, 403, 404, 429, 503) },
        },
      },
      '/business/webhook-endpoints/{id}/deliveries': {
        get: {
          summary: 'The delivery log: one entry per attempt, newest first', security: webhookAuth, parameters: [ENDPOINT_ID, LIMIT, CURSOR],
          responses: { 200: json(deliveryLogSchema, 'A page of attempts'), ...errors(400, 401, 403, 404, 429, 503) },
        },
      },
      '/business/rate-cards': {
        get: { summary: 'Read the catalog', security: auth, responses: { 200: json(catalogSchema, 'Catalog'), ...errors(401, 403, 503) } },
      },
    },
  }
}

export default async function openApiRoutes(app: FastifyInstance) {
  const document = JSON.stringify(openApiDocument())
  app.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(document))
}
