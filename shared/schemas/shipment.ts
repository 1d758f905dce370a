import { z } from 'zod'
import { SANDBOX_SCENARIOS, VEHICLE_TYPES } from '../courier.js'
import { checkPricingFields, pricingFieldsJsonSchema, coordinateFields, evenWithFieldErrors, isEmail, LONG_TEXT_MAX, optionalBoolean, optionalEnum, optionalNumber, optionalText, optionId, requiredNumber, requiredText, streetAddress } from './fields.js'
import { listBody } from './parse.js'

// What `isEmail` accepts, as a pattern for the OpenAPI document only (never run on input).
const EMAIL_PATTERN = '^[^\\s@]+@[^\\s@]+\\.[^\\s@]+$'

export const MAX_SHIPMENTS = 100
// Not in the spec: it keeps weight × quantity and the price far from overflow.
export const MAX_QUANTITY = 10000

// The fields of a shipment, shared by the test-mode schema and the live one.
const shipmentFields = {
  dropoff_address: streetAddress('dropoff_address'),
  dropoff_state: requiredText('dropoff_state'),
  recipient_name: requiredText('recipient_name'),
  recipient_phone: requiredText('recipient_phone'),
  item_name: requiredText('item_name'),
  weight: requiredNumber('weight', { min: 0.1, max: 100 }),
  quantity: requiredNumber('quantity', { min: 1, max: MAX_QUANTITY, integer: true }),
  vehicle_type: optionalEnum('vehicle_type', VEHICLE_TYPES),
  option_id: optionId(),
  quote_id: optionalText('quote_id'),
  max_price: optionalNumber('max_price', { min: 0 }),
  // Test keys only: the sandbox courier's path for this order. Ignored, and not kept, in live mode.
  sandbox_scenario: optionalEnum('sandbox_scenario', SANDBOX_SCENARIOS),
  pickup_address: optionalText('pickup_address', { max: LONG_TEXT_MAX }),
  pickup_state: optionalText('pickup_state'),
  sender_name: optionalText('sender_name'),
  sender_phone: optionalText('sender_phone'),
  recipient_email: optionalText('recipient_email', { format: { test: isEmail, message: 'recipient_email must be an email' } })
    // The OpenAPI document keeps describing the accepted shape as a pattern; `isEmail` checks it.
    .meta({ pattern: EMAIL_PATTERN }),
  alternate_phone: optionalText('alternate_phone'),
  item_category: optionalText('item_category'),
  item_description: optionalText('item_description', { max: LONG_TEXT_MAX }),
  declared_value: optionalNumber('declared_value', { min: 0 }),
  is_fragile: optionalBoolean('is_fragile'),
  // Proof of delivery (DESIGN 14): with `pin`, the recipient gives the courier a 4-digit code;
  // with `photo`, the courier photographs the parcel at the door.
  proof: z.object({
    pin: optionalBoolean('proof.pin'),
    photo: optionalBoolean('proof.photo'),
  }, { error: 'proof must be an object' }).optional(),
  ...coordinateFields,
}

/** One element of the `POST /v2/business/order` body. Unknown fields are dropped, never stored. */
export const shipmentSchema = z.object(shipmentFields, { error: 'must be a JSON object' })
  .superRefine(checkPricingFields, evenWithFieldErrors)
  .meta(pricingFieldsJsonSchema)

export type Shipment = z.infer<typeof shipmentSchema>

const LIST_RULES = { min: 1, max: MAX_SHIPMENTS, message: `body must be an array of 1 to ${MAX_SHIPMENTS} shipments` }

/** The placement body: its length is checked before any shipment is validated. */
export const placementRequestSchema = listBody(shipmentSchema, LIST_RULES)

const { sandbox_scenario: _testKeysOnly, ...liveShipmentFields } = shipmentFields

/**
 * A live key's placement body (DESIGN 11): `sandbox_scenario` is for test keys only, so in live
 * mode it is an unknown field like any other: dropped unchecked, never stored, not in the hash.
 */
export const livePlacementRequestSchema = listBody(
  z.object(liveShipmentFields, { error: 'must be a JSON object' }).superRefine(checkPricingFields, evenWithFieldErrors),
  LIST_RULES,
)
