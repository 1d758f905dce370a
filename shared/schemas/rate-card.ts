import { z } from 'zod'
import { VEHICLE_TYPES } from '../courier.js'
import { isStorableText, UNSTORABLE_TEXT } from './fields.js'

const text = (max: number) => z.string().trim().min(1, { error: 'must not be empty' }).max(max, { error: `must be at most ${max} characters` })
  .refine(isStorableText, { error: UNSTORABLE_TEXT, when: (payload) => payload.issues.length === 0 })

/** `[lng, lat]`, GeoJSON order. */
const position = z.tuple([z.number().min(-180).max(180), z.number().min(-90).max(90)], { error: 'must be a [longitude, latitude] pair' })

const zoneSchema = z.object({
  name: text(100),
  polygon: z.array(position, { error: 'must be a ring of [longitude, latitude] pairs' }),
})

const priceSchema = z.object({
  from: text(100),
  to: text(100),
  price: z.number({ error: 'must be a number' }).min(0, { error: 'must not be negative' }),
})

const optionSchema = z.object({
  vehicle_type: z.enum(VEHICLE_TYPES, { error: `must be one of ${VEHICLE_TYPES.join(', ')}` }),
  label: text(100),
  min_weight_kg: z.number().min(0, { error: 'must not be negative' }).optional(),
  max_weight_kg: z.number().positive({ error: 'must be greater than 0' }),
  prices: z.array(priceSchema).min(1, { error: 'must list at least one price' }),
})

/**
 * A rate-card file as the operator writes it: prices in major units, polygons as GeoJSON
 * `[lng, lat]` rings. Shape only; the rules that tie fields together live in the importer's
 * checks (`shared/pricing/rate-card-file.ts`).
 */
export const rateCardFileSchema = z.object({
  name: text(255),
  currency: z.string().regex(/^[A-Z]{3}$/, { error: 'must be a three-letter ISO 4217 code' }),
  zones: z.array(zoneSchema).min(1, { error: 'must list at least one zone' }),
  options: z.array(optionSchema).min(1, { error: 'must list at least one option' }),
})

export type RateCardFile = z.infer<typeof rateCardFileSchema>
export type RateCardFileOption = RateCardFile['options'][number]
