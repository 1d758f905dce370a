import { z } from 'zod'
import { VEHICLE_TYPES } from '../courier.js'
import { checkPricingFields, pricingFieldsJsonSchema, coordinateFields, evenWithFieldErrors, LONG_TEXT_MAX, optionalEnum, optionalText, optionId, requiredNumber, requiredText } from './fields.js'

/** Body of `POST /v2/business/order/cost`. The quote's weight is already the billable weight. */
export const quoteRequestSchema = z
  .object({
    pickup_address: requiredText('pickup_address', { min: 3, max: LONG_TEXT_MAX }),
    dropoff_address: requiredText('dropoff_address', { min: 3, max: LONG_TEXT_MAX }),
    weight: requiredNumber('weight', { min: 0.1 }),
    vehicle_type: optionalEnum('vehicle_type', VEHICLE_TYPES),
    option_id: optionId(),
    pickup_state: optionalText('pickup_state'),
    dropoff_state: optionalText('dropoff_state'),
    ...coordinateFields,
  }, { error: 'body must be a JSON object' })
  .superRefine(checkPricingFields, evenWithFieldErrors)
  .meta(pricingFieldsJsonSchema)

export type QuoteRequest = z.infer<typeof quoteRequestSchema>

/** The quote as the API shows it: money in major units, nulls under distance pricing. */
export const quoteResponseSchema = z.object({
  price: z.number(),
  distance_km: z.number(),
  currency: z.string(),
  pricing_model: z.enum(['rate_card', 'distance']),
  option_id: z.string().nullable(),
  option_label: z.string().nullable(),
  delivery_mode: z.enum(['MOTORBIKE', 'BUS_VAN', 'TRUCK']),
  from_zone_name: z.string().nullable(),
  to_zone_name: z.string().nullable(),
  quote_id: z.string().nullable().describe('qt_…: send it with a shipment to be charged this price; null when the quote could not be held'),
  expires_at: z.string().nullable().describe('ISO 8601 UTC: until then the quote_id holds this price'),
})

export type QuoteResponse = z.infer<typeof quoteResponseSchema>
