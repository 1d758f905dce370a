import { z } from 'zod'
import { catalogSchema } from '../../../shared/schemas/catalog.js'
import { courierOfferListSchema, courierOrderListSchema, courierOrderSchema, courierProfileSchema, declineRequestSchema, deliverRequestSchema, locationRequestSchema, reasonRequestSchema, shiftRequestSchema, shiftSchema } from '../../../shared/schemas/courier.js'
import { errorBodySchema } from '../../../shared/schemas/error.js'
import { cancelRequestSchema, photoLinkSchema, eventListSchema, eventSchema, orderListSchema, orderSchema, sandboxAdvanceSchema, transactionListSchema, transactionSchema, walletSchema } from '../../../shared/schemas/order.js'
import { placementPendingSchema, placementResultSchema } from '../../../shared/schemas/placement.js'
import { quoteRequestSchema, quoteResponseSchema } from '../../../shared/schemas/quote.js'
import { placementRequestSchema, shipmentSchema } from '../../../shared/schemas/shipment.js'
import { createdEndpointSchema, deliveryLogSchema, endpointListSchema, endpointRequestSchema, endpointSchema, redeliverySchema, rotatedSecretSchema, rotateSecretRequestSchema } from '../../../shared/schemas/webhook.js'

/*
 * The document's named schemas, converted by zod from the very schemas that validate requests
 * and build answers: a field is never listed twice. Requests are described as they are read
 * (`io: 'input'`), answers as they are written (`io: 'output'`, closed objects, so a field the
 * document does not know fails the response validation of the tests).
 */

const requests = {
  QuoteRequest: quoteRequestSchema,
  Shipment: shipmentSchema,
  PlacementRequest: placementRequestSchema,
  CancelRequest: cancelRequestSchema,
  SandboxAdvanceRequest: sandboxAdvanceSchema,
  WebhookEndpointRequest: endpointRequestSchema,
  RotateSecretRequest: rotateSecretRequestSchema,
  ShiftRequest: shiftRequestSchema,
  LocationRequest: locationRequestSchema,
  DeclineRequest: declineRequestSchema,
  ReasonRequest: reasonRequestSchema,
  DeliverRequest: deliverRequestSchema,
} satisfies Record<string, z.ZodType>

const answers = {
  Error: errorBodySchema,
  Quote: quoteResponseSchema,
  Catalog: catalogSchema,
  PlacementResult: placementResultSchema,
  PlacementPending: placementPendingSchema,
  Order: orderSchema,
  OrderList: orderListSchema,
  Wallet: walletSchema,
  Transaction: transactionSchema,
  TransactionList: transactionListSchema,
  Event: eventSchema,
  EventList: eventListSchema,
  WebhookEndpoint: endpointSchema,
  CreatedWebhookEndpoint: createdEndpointSchema,
  WebhookEndpointList: endpointListSchema,
  RotatedSecret: rotatedSecretSchema,
  DeliveryLog: deliveryLogSchema,
  Redelivery: redeliverySchema,
  CourierProfile: courierProfileSchema,
  Shift: shiftSchema,
  CourierOfferList: courierOfferListSchema,
  CourierOrder: courierOrderSchema,
  CourierOrderList: courierOrderListSchema,
  PhotoLink: photoLinkSchema,
} satisfies Record<string, z.ZodType>

export type SchemaName = keyof typeof requests | keyof typeof answers

/** `{ $ref }` to a named schema. */
export const ref = (name: SchemaName) => ({ $ref: `#/components/schemas/${name}` })

type JsonSchema = z.core.JSONSchema.JSONSchema

/*
 * JSON `null` counts as omitted in every request body (docs/contracts.md), so each optional field
 * of a request object also takes null.
 */
function nullableOptionals(ctx: { zodSchema: z.core.$ZodTypes; jsonSchema: JsonSchema }) {
  const { properties, required = [] } = ctx.jsonSchema
  if (ctx.zodSchema._zod.def.type !== 'object' || !properties) return
  for (const [field, schema] of Object.entries(properties)) {
    if (required.includes(field) || typeof schema === 'boolean') continue
    properties[field] = orNull(schema)
  }
}

function orNull(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string') {
    const enumeration = schema.enum ? { enum: [...schema.enum, null] } : {}
    return { ...schema, type: [schema.type, 'null'], ...enumeration }
  }
  return { anyOf: [schema, { type: 'null' }] }
}

function convert(schemas: Record<string, z.ZodType>, io: 'input' | 'output', override?: typeof nullableOptionals) {
  const registry = z.registry<{ id: string }>()
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id })
  const { schemas: converted } = z.toJSONSchema(registry, {
    io,
    target: 'draft-2020-12',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
    ...(override && { override }),
  })
  return Object.fromEntries(Object.entries(converted).map(([id, schema]) => {
    const { $schema: _version, $id: _id, ...rest } = schema
    return [id, rest]
  }))
}

/** `components.schemas` of the document. */
export function componentSchemas(): Record<string, JsonSchema> {
  return { ...convert(requests, 'input', nullableOptionals), ...convert(answers, 'output') }
}
