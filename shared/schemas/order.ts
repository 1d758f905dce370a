import { z } from 'zod'
import { COURIER_VEHICLE_TYPES, ORDER_EVENT_TYPES, ORDER_STATUSES, SANDBOX_SCENARIOS, VEHICLE_TYPES, type OrderStatus } from '../courier.js'
import { optionalText } from './fields.js'
import { shipmentSchema } from './shipment.js'

// The resources of docs/contracts.md section 6, as the OpenAPI document describes them. The
// gateway builds them in shared/orders/resource.ts; tests hold the two together.

/** Body of `POST /v2/business/orders/{order_id}/cancel`; the body itself may be left out. */
export const cancelRequestSchema = z.object({ reason: optionalText('reason', { max: 255 }) }, { error: 'body must be a JSON object' })

const iso = z.string().describe('ISO 8601 UTC, to the millisecond')

// Each shipment field as sent, null when it was not sent or was erased after the retention period.
const shipmentFields = Object.fromEntries(
  Object.entries(shipmentSchema.shape)
    .filter(([field]) => field !== 'vehicle_type' && field !== 'option_id' && field !== 'sandbox_scenario')
    .map(([field, schema]) => [field, (schema instanceof z.ZodOptional ? schema.unwrap() : schema).nullable()]),
)

export const orderSchema = z.object({
  order_id: z.string(),
  placement_id: z.string(),
  livemode: z.boolean(),
  status: z.enum(ORDER_STATUSES),
  version: z.number().int().positive(),
  price: z.number(),
  currency: z.string(),
  pricing_model: z.enum(['rate_card', 'distance']),
  vehicle_type: z.enum(VEHICLE_TYPES).describe('The vehicle the price assumed: the rate card\'s, or under distance pricing the one of `delivery_mode`; `courier.vehicle_type` is the one that carries it'),
  option_id: z.string().nullable(),
  option_label: z.string().nullable(),
  delivery_mode: z.enum(['MOTORBIKE', 'BUS_VAN', 'TRUCK']),
  distance_km: z.number(),
  from_zone_name: z.string().nullable(),
  to_zone_name: z.string().nullable(),
  ...shipmentFields,
  sandbox_scenario: z.enum(SANDBOX_SCENARIOS).optional().describe('Test orders only: the sandbox courier\'s path'),
  tracking_url: z.string().nullable().describe("The recipient's tracking page: status, courier's first name and vehicle, position and ETA, the PIN; no login"),
  delivery_pin: z.string().nullable().describe('With `proof.pin`: the 4 digits the recipient gives the courier at the door. Never shown to couriers'),
  courier: z.object({
    id: z.string().nullable().describe('The registered courier; null for one an operator typed in'),
    name: z.string(),
    phone: z.string(),
    vehicle_type: z.enum(COURIER_VEHICLE_TYPES).nullable(),
    vehicle_plate: z.string().nullable(),
    location: z.object({ latitude: z.number(), longitude: z.number(), at: iso }).nullable().describe("The courier's last reported position while the order is active"),
  }).nullable(),
  eta: z.object({ stage: z.enum(['pickup', 'dropoff']), at: iso }).nullable().describe('When the courier reaches the pickup (assigned) or the dropoff (picked_up)'),
  proof_of_delivery: z.object({
    pin_required: z.boolean(),
    photo_required: z.boolean(),
    pin_verified: z.boolean().describe('The courier gave the right PIN (an operator\'s delivery verifies nothing)'),
    photo_url: z.string().nullable().describe('The courier\'s photo at the door: GET it with your API key for a link any browser can open for 15 minutes. Null without a photo, or once erased'),
    delivered_at: iso,
    latitude: z.number().nullable().describe("The courier's last reported position at delivery, if known"),
    longitude: z.number().nullable(),
  }).nullable().describe('How the order was delivered; null until it is delivered'),
  cancellation: z.object({
    cancellable: z.boolean(),
    fee: z.number().nullable().describe('What a cancel would cost now; null when the order cannot be cancelled'),
    free_until: iso.nullable().describe('End of the free window; set only while assigned'),
  }),
  refunded_amount: z.number(),
  history: z.array(z.object({ status: z.enum(ORDER_STATUSES), at: iso, reason: z.string().optional() })),
  created_at: iso,
  updated_at: iso,
})

const page = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() })

export const orderListSchema = page(orderSchema)

export const walletSchema = z.object({ balance: z.number(), currency: z.string(), livemode: z.boolean(), updated_at: iso })

export const transactionSchema = z.object({
  id: z.string().describe('txn_, the wallet\'s name (16 hex digits) and the entry\'s number in that wallet: txn_3F7A2C9B4E1D8A0F_42'),
  type: z.enum(['credit', 'debit', 'refund']),
  amount: z.number().nonnegative(),
  balance_after: z.number(),
  reference: z.string().nullable(),
  placement_id: z.string().nullable(),
  order_id: z.string().nullable(),
  created_at: iso,
})

export const transactionListSchema = page(transactionSchema)

export const eventSchema = z.object({
  id: z.string().describe('evt_…'),
  type: z.enum(ORDER_EVENT_TYPES),
  created_at: iso,
  livemode: z.boolean(),
  sequence: z.number().int().positive().describe('Per business and mode, from 1, without gaps'),
  data: z.object({ order: orderSchema }),
})

export const eventListSchema = z.object({ data: z.array(eventSchema), has_more: z.boolean() })

/** Body of `POST /v2/business/sandbox/orders/{order_id}/advance`. */
// A courier's moves only: a test order is cancelled as a live one is, by the business's cancel.
const ADVANCE_TARGETS = ORDER_STATUSES.filter((status): status is Exclude<OrderStatus, 'cancelled'> => status !== 'cancelled')
export const sandboxAdvanceSchema = z.object({
  to: z.enum(ADVANCE_TARGETS, {
    error: (issue) => issue.input === undefined ? 'to should not be empty'
      : issue.input === 'cancelled' ? 'to cannot be cancelled: cancel a test order with POST /v2/business/orders/{order_id}/cancel'
        : `to must be one of the following values: ${ADVANCE_TARGETS.join(', ')}`,
  }),
  reason: optionalText('reason', { max: 255 }),
}, { error: 'body must be a JSON object' })

/** `GET /v2/business/orders/{order_id}/proof/photo`: where the photo is for the next 15 minutes. */
export const photoLinkSchema = z.object({
  url: z.string().describe('A link to the photo that needs no API key, valid until expires_at'),
  expires_at: z.string().describe('ISO 8601'),
})
