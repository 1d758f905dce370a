import { z } from 'zod'
import { PHONE_RULE, e164Phone } from '../phone.js'
import { stateNamed } from '../geo/gazetteer.js'

/*
 * Field builders that speak class-validator's wording, the wording of the spec's one example
 * (`weight must not be less than 0.1`). Every resource schema is made of these, so a rule and
 * its message are written once.
 */

const STRING_MAX = 255
export const LONG_TEXT_MAX = 500

function stringBase(field: string, required: boolean) {
  return z.string({ error: (issue) => (issue.input === undefined && required ? `${field} should not be empty` : `${field} must be a string`) })
}

interface TextRules {
  min?: number
  max?: number
  /** A check in plain code that must run in time linear in the value (no backtracking regex). */
  format?: { test: (value: string) => boolean; message: string }
}

/*
 * Validation is linear in the input (docs/contracts.md): the length limit is the first check of every
 * text field, and the checks after it run only when it passed (`when`), so a 1 MiB string costs
 * one comparison. `.min()` stays a plain check (and shows in the OpenAPI document): a string over
 * the maximum is never under the minimum, so it adds neither work nor a message.
 */
const within = (max: number) => (payload: z.core.ParsePayload) => typeof payload.value === 'string' && payload.value.length <= max

// PostgreSQL's text holds neither NUL nor half a surrogate pair, and JSON can say both ("\u0000",
// "\ud800"): a placement carrying one was a 500. With the u flag a whole pair is one code point,
// so this matches only what cannot be stored; it runs once the length check has passed.
const UNSTORABLE = /[\0\p{Cs}]/u
export const UNSTORABLE_TEXT = 'must not contain a NUL character or an unpaired surrogate'

/** Whether PostgreSQL can hold this text (and compare it as a query parameter). */
export function isStorableText(value: string): boolean {
  return !UNSTORABLE.test(value)
}

const storable = (field: string, max: number) =>
  [isStorableText, { error: `${field} ${UNSTORABLE_TEXT}`, when: within(max) }] as const

// JSON `null` counts as omitted: `parseBody` drops null fields before these schemas run, which
// keeps them plain zod types (fast to check, and exact in the OpenAPI document).

/** Whether text holds more than white space: what a required field, or a sent `option_id`, must. */
const isNotBlank = (value: string): boolean => value.trim().length > 0

export function requiredText(field: string, rules: TextRules = {}) {
  const max = rules.max ?? STRING_MAX
  let schema = stringBase(field, true)
    .max(max, { error: `${field} must be shorter than or equal to ${max} characters` })
    .refine(isNotBlank, { error: `${field} should not be empty`, when: within(max) })
    .refine(...storable(field, max))
  if (rules.min) schema = schema.min(rules.min, { error: `${field} must be longer than or equal to ${rules.min} characters` })
  // The OpenAPI document says "not blank" as a pattern; the refinement above is what checks it.
  return schema.meta({ pattern: '\\S' })
}

/** An address a courier goes to, by the spec's rule for a shipment's drop-off: 5 to 500 characters, not blank. */
export function streetAddress(field: string) {
  return requiredText(field, { min: 5, max: LONG_TEXT_MAX })
}

/**
 * A phone number by the platform's one rule (shared/phone.ts), read to the E.164 form it
 * is stored and compared in: `0809 000 0016` becomes `+2348090000016`.
 */
export function phoneNumber(field: string) {
  return requiredText(field, { max: 64 }).transform((typed, ctx) => {
    const phone = e164Phone(typed)
    if (phone !== null) return phone
    ctx.addIssue({ code: 'custom', message: `${field} must be ${PHONE_RULE}` })
    return z.NEVER
  })
}

/**
 * A Nigerian state or the FCT as the geocoder knows it (`Lagos`, `lagos state`, `Abuja`), read to
 * its name (`Lagos`, `FCT`): a state the geocoder cannot narrow an address to is a mistake.
 */
export function nigerianState(field: string) {
  return requiredText(field).transform((typed, ctx) => {
    const place = stateNamed(typed)
    if (place) return place.state
    ctx.addIssue({ code: 'custom', message: `${field} must be one of Nigeria's 36 states or the FCT, such as Lagos` })
    return z.NEVER
  })
}

// The times PostgreSQL stores: years 0001 to 9999. JavaScript also reads year 0000 and six-digit
// years, which PostgreSQL refuses: a caller's bad time would have been a 500, not their 400.
const EARLIEST_TIME = Date.parse('0001-01-01T00:00:00.000Z')
const LATEST_TIME = Date.parse('9999-12-31T23:59:59.999Z')

/** Whether a time (ms since the epoch) can be stored and compared in PostgreSQL. */
export function isStorableTime(ms: number): boolean {
  return ms >= EARLIEST_TIME && ms <= LATEST_TIME
}

export function optionalText(field: string, rules: TextRules = {}) {
  const max = rules.max ?? STRING_MAX
  let schema = stringBase(field, false).max(max, { error: `${field} must be shorter than or equal to ${max} characters` }).refine(...storable(field, max))
  if (rules.format) schema = schema.refine(rules.format.test, { error: rules.format.message, when: within(max) })
  return schema.optional()
}

/** `option_id` when sent: an id of the catalog, never blank (a blank one reads as none). */
export function optionId() {
  return optionalText('option_id', { format: { test: isNotBlank, message: 'option_id should not be empty' } }).meta({ pattern: '\\S' })
}

/**
 * The shape the old pattern `^[^\s@]+@[^\s@]+\.[^\s@]+$` accepted, in one pass: no white space,
 * one `@` with text on both sides, and a dot in the domain with text on both sides of it. The
 * pattern backtracked quadratically on `a@` followed by many dots.
 */
export function isEmail(value: string): boolean {
  if (/\s/.test(value)) return false
  const at = value.indexOf('@')
  if (at < 1 || value.indexOf('@', at + 1) !== -1) return false
  const domain = value.slice(at + 1)
  return domain.slice(1, -1).includes('.')
}

interface NumberRules {
  min?: number
  max?: number
  integer?: boolean
}

function numberBase(field: string, required: boolean, rules: NumberRules) {
  let schema = z.number({ error: (issue) => (issue.input === undefined && required ? `${field} should not be empty` : `${field} must be a number`) })
  if (rules.integer) schema = schema.int({ error: `${field} must be an integer number` })
  if (rules.min !== undefined) schema = schema.min(rules.min, { error: `${field} must not be less than ${rules.min}` })
  if (rules.max !== undefined) schema = schema.max(rules.max, { error: `${field} must not be greater than ${rules.max}` })
  return schema
}

export function requiredNumber(field: string, rules: NumberRules = {}) {
  return numberBase(field, true, rules)
}

export function optionalNumber(field: string, rules: NumberRules = {}) {
  return numberBase(field, false, rules).optional()
}

export function optionalBoolean(field: string) {
  return z.boolean({ error: `${field} must be a boolean value` }).optional()
}

export function optionalEnum<const T extends readonly [string, ...string[]]>(field: string, values: T) {
  return z.enum(values, { error: `${field} must be one of the following values: ${values.join(', ')}` }).optional()
}

export const latitude = (field: string) => optionalNumber(field, { min: -90, max: 90 })
export const longitude = (field: string) => optionalNumber(field, { min: -180, max: 180 })

/** The two ends' coordinates, shared by the quote request and the shipment. */
export const coordinateFields = {
  pickup_latitude: latitude('pickup_latitude'),
  pickup_longitude: longitude('pickup_longitude'),
  dropoff_latitude: latitude('dropoff_latitude'),
  dropoff_longitude: longitude('dropoff_longitude'),
}

interface PricingFields {
  vehicle_type?: string
  option_id?: string
  pickup_latitude?: number
  pickup_longitude?: number
  dropoff_latitude?: number
  dropoff_longitude?: number
}

/**
 * Zod skips a refinement once any field failed; this runs the cross-field rules anyway (on any
 * object), so `errors` lists every violation, not only the per-field ones.
 */
export const evenWithFieldErrors = {
  when: (payload: z.core.ParsePayload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value),
}

/**
 * Rules that tie fields together and need no rate card: a latitude needs its longitude, and
 * `option_id` goes with `bus_van` and `truck` only. Shared by quote and shipment.
 */
export function checkPricingFields(value: PricingFields, ctx: z.core.$RefinementCtx) {
  for (const end of ['pickup', 'dropoff'] as const) {
    const lat = value[`${end}_latitude`]
    const lng = value[`${end}_longitude`]
    if (lat !== undefined && lng === undefined) ctx.addIssue({ code: 'custom', path: [`${end}_longitude`], message: `${end}_longitude is required when ${end}_latitude is sent` })
    if (lng !== undefined && lat === undefined) ctx.addIssue({ code: 'custom', path: [`${end}_latitude`], message: `${end}_latitude is required when ${end}_longitude is sent` })
  }
  const { vehicle_type: vehicle, option_id: option } = value
  if (vehicle === 'bike' && option !== undefined) ctx.addIssue({ code: 'custom', path: ['option_id'], message: 'option_id must be omitted for bike; the band is chosen by weight' })
  if ((vehicle === 'bus_van' || vehicle === 'truck') && option === undefined) ctx.addIssue({ code: 'custom', path: ['option_id'], message: `option_id is required when vehicle_type is ${vehicle}` })
  if (vehicle === undefined && option !== undefined) ctx.addIssue({ code: 'custom', path: ['vehicle_type'], message: 'vehicle_type is required when option_id is sent' })
}

const isNumber = { type: 'number' }
const isString = { type: 'string' }
// Each part speaks of one or two fields and says nothing of the others (validators that close
// objects by default, such as Redocly's example check, would otherwise refuse them).
const about = (properties: Record<string, unknown>, required: string[] = []) => ({ ...(required.length > 0 && { required }), properties, unevaluatedProperties: true })
const ifSent = (field: string, type: Record<string, unknown>, then: Record<string, unknown>) => ({ if: about({ [field]: type }, [field]), then })
const needs = (field: string, type: Record<string, unknown>) => about({ [field]: type }, [field])
const whenVehicle = (vehicles: string[], then: Record<string, unknown>) => ({ if: about({ vehicle_type: { enum: vehicles } }, ['vehicle_type']), then })

/**
 * `checkPricingFields` in JSON Schema, for the OpenAPI document only: a client that validates
 * with it sends nothing the service refuses for these rules. `null` counts as omitted, so "sent"
 * means "sent with a value".
 */
export const pricingFieldsJsonSchema = {
  allOf: [
    ...(['pickup', 'dropoff'] as const).flatMap((end) => [
      ifSent(`${end}_latitude`, isNumber, needs(`${end}_longitude`, isNumber)),
      ifSent(`${end}_longitude`, isNumber, needs(`${end}_latitude`, isNumber)),
    ]),
    whenVehicle(['bike'], about({ option_id: { type: 'null' } })),
    whenVehicle(['bus_van', 'truck'], needs('option_id', isString)),
    ifSent('option_id', isString, needs('vehicle_type', isString)),
  ],
}
