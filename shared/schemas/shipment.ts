import { z } from 'zod'
import { VEHICLE_TYPES } from '../pricing/types.js'
import { checkPricingFields, coordinateFields, evenWithFieldErrors, LONG_TEXT_MAX, optionalBoolean, optionalEnum, optionalNumber, optionalText, requiredNumber, requiredText } from './fields.js'

export const MAX_SHIPMENTS = 100
// Not in the spec: it keeps weight × quantity and the price far from overflow.
export const MAX_QUANTITY = 10000

/** One element of the `POST /v2/business/order` body. Unknown fields are dropped, never stored. */
export const shipmentSchema = z
  .object({
    dropoff_address: requiredText('dropoff_address', { min: 5, max: LONG_TEXT_MAX }),
    dropoff_state: requiredText('dropoff_state'),
    recipient_name: requiredText('recipient_name'),
    recipient_phone: requiredText('recipient_phone'),
    item_name: requiredText('item_name'),
    weight: requiredNumber('weight', { min: 0.1, max: 100 }),
    quantity: requiredNumber('quantity', { min: 1, max: MAX_QUANTITY, integer: true }),
    vehicle_type: optionalEnum('vehicle_type', VEHICLE_TYPES),
    option_id: optionalText('option_id'),
    pickup_address: optionalText('pickup_address', { max: LONG_TEXT_MAX }),
    pickup_state: optionalText('pickup_state'),
    sender_name: optionalText('sender_name'),
    sender_phone: optionalText('sender_phone'),
    recipient_email: optionalText('recipient_email', { pattern: { regex: /^[^\s@]+@[^\s@]+\.[^\s@]+$/, message: 'recipient_email must be an email' } }),
    alternate_phone: optionalText('alternate_phone'),
    item_category: optionalText('item_category'),
    item_description: optionalText('item_description', { max: LONG_TEXT_MAX }),
    declared_value: optionalNumber('declared_value', { min: 0 }),
    is_fragile: optionalBoolean('is_fragile'),
    ...coordinateFields,
  }, { error: 'must be a JSON object' })
  .superRefine(checkPricingFields, evenWithFieldErrors)

export type Shipment = z.infer<typeof shipmentSchema>

const BODY_MESSAGE = `body must be an array of 1 to ${MAX_SHIPMENTS} shipments`

export const placementRequestSchema = z
  .array(shipmentSchema, { error: BODY_MESSAGE })
  .min(1, { error: BODY_MESSAGE })
  .max(MAX_SHIPMENTS, { error: BODY_MESSAGE })
