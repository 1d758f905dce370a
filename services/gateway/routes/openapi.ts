import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { errorBodySchema } from '../../../shared/schemas/error.js'
import { catalogSchema } from '../../../shared/schemas/catalog.js'
import { placementResultSchema } from '../../../shared/schemas/placement.js'
import { quoteRequestSchema, quoteResponseSchema } from '../../../shared/schemas/quote.js'
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

/** The OpenAPI 3.1 document of the public API, built once from the resource schemas. */
export function openApiDocument() {
  const auth = [{ apiKey: [] }]
  return {
    openapi: '3.1.0',
    info: { title: 'Courier delivery ordering API', version: '2' },
    servers: [{ url: '/v2' }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'API key with the orders:write scope' } },
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
