import { z } from 'zod'
import { optionalNumber, optionalText, requiredNumber, requiredText } from './fields.js'

// The bodies of `/v2/courier/*` (DESIGN 14). Every refusal is the spec's 400 body, field by field.

const object = { error: 'body must be a JSON object' }

/** The body of a move that takes none (pickup, return, accept): absent, or an object whose fields are ignored. */
export const noFieldsRequestSchema = z.object({}, object)

export const shiftRequestSchema = z.object({
  // Required: a refinement of an optional field never runs when the field is missing, and a
  // missing status would have read as `offline`.
  status: z.enum(['available', 'offline'], { error: (issue) => (issue.input === undefined ? 'status should not be empty' : 'status must be one of the following values: available, offline') }),
}, object)

// A fix's time, with its offset (`2026-11-25T10:00:00Z`, `…+01:00`): `Date.parse` alone also reads
// "1" or "March 7", and years PostgreSQL refuses. Older than a day it is no position worth keeping
// (a last fix lives a day); a time ahead of the server's is taken as the arrival (the route).
const isoTime = z.iso.datetime({ offset: true })
const isIsoTime = (value: string) => isoTime.safeParse(value).success
const FIX_MAX_AGE_MS = 24 * 3600 * 1000

export const locationRequestSchema = z.object({
  latitude: requiredNumber('latitude', { min: -90, max: 90 }),
  longitude: requiredNumber('longitude', { min: -180, max: 180 }),
  accuracy_m: optionalNumber('accuracy_m', { min: 0, max: 100_000 }),
  at: optionalText('at', { max: 40, format: { test: isIsoTime, message: 'at must be an ISO 8601 time' } })
    .refine((value) => value === undefined || Date.parse(value) >= Date.now() - FIX_MAX_AGE_MS, { error: 'at must be within the last 24 hours', when: (payload) => payload.issues.length === 0 }),
}, object)

/** The longest reason a courier may give; the courier app's form says the same. */
export const REASON_MAX_LENGTH = 255

export const declineRequestSchema = z.object({ reason: optionalText('reason', { max: REASON_MAX_LENGTH }) }, object)

/** `fail` and `unassign` say why: the business reads it in the order's history. */
export const reasonRequestSchema = z.object({ reason: requiredText('reason', { max: REASON_MAX_LENGTH }) }, object)

/** `deliver` as JSON; the PIN is checked when the order asks for one (proof of delivery). */
export const deliverRequestSchema = z.object({ pin: optionalText('pin', { max: 8 }) }, object)
/** The PIN a delivery gives, as the door's check reads it: a blank field is none (not a wrong try), and spaces around it are the keyboard's. */
export const pinGiven = (pin: string | undefined): string | null => pin?.trim() || null

// The answers of `/v2/courier/*`, as the routes build them: the OpenAPI document and the tests'
// response checks read these.
const point = { latitude: z.number().nullable(), longitude: z.number().nullable() }
const fix = z.object({ latitude: z.number(), longitude: z.number(), at: z.string() })
const item = z.object({ name: z.unknown(), category: z.unknown(), weight: z.unknown(), quantity: z.unknown(), is_fragile: z.unknown() })
const history = z.array(z.object({ status: z.string(), at: z.string(), reason: z.string().optional() }))

export const courierProfileSchema = z.object({
  courier_id: z.string(), name: z.string(), phone: z.string(), vehicle_type: z.string(), vehicle_plate: z.string().nullable(), max_weight_kg: z.number(),
  shift: z.enum(['available', 'offline']), location: fix.nullable(), active_orders: z.array(z.object({ order_id: z.string(), status: z.string() })),
})

export const shiftSchema = z.object({ shift: z.enum(['available', 'offline']) })

export const courierOfferSchema = z.object({
  offer_id: z.string(), order_id: z.string(),
  pickup: z.object({ address: z.unknown(), state: z.unknown(), ...point }),
  dropoff: z.object({ area: z.unknown(), distance_km: z.number() }),
  distance_to_pickup_km: z.number().nullable(), item, vehicle_type: z.string(), expires_at: z.string(),
}).describe('An offer: never the recipient, the price or the PIN')

export const courierOfferListSchema = z.object({ data: z.array(courierOfferSchema) })

export const courierOrderSchema = z.object({
  order_id: z.string(), status: z.string(), version: z.number(),
  pickup: z.object({ address: z.unknown(), state: z.unknown(), ...point, contact_name: z.unknown(), contact_phone: z.unknown() }),
  dropoff: z.object({ address: z.unknown(), state: z.unknown(), ...point, recipient_name: z.unknown(), recipient_phone: z.unknown(), alternate_phone: z.unknown() }),
  item, proof: z.object({ pin_required: z.boolean(), photo_required: z.boolean() }), history,
}).describe("An order the courier holds: both ends in full; never the price, the business's wallet or the PIN")

export const courierOrderListSchema = z.object({ data: z.array(courierOrderSchema) })
