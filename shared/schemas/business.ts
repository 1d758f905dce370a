import { z } from 'zod'
import { nigerianState, phoneNumber, requiredText, streetAddress } from './fields.js'

/**
 * A business as an operator opens it. Its phone, address and state are the sender and pickup of
 * every shipment that names none (the spec's defaults), so they follow the rules of those fields:
 * an address a courier can go to, a phone that can be called, a state the geocoder knows.
 */
export const businessProfileSchema = z.object({
  name: requiredText('name'),
  phone: phoneNumber('phone'),
  address: streetAddress('address'),
  state: nigerianState('state'),
})
