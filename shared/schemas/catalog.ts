import { z } from 'zod'
import { VEHICLE_TYPES } from '../courier.js'

const catalogOptionSchema = z.object({ id: z.string(), label: z.string(), min_weight_kg: z.number().nullable(), max_weight_kg: z.number() })

/** Body of `GET /v2/business/rate-cards`. */
export const catalogSchema = z.object({
  currency: z.string(),
  rate_card_id: z.string().nullable(),
  version: z.number().int().nullable(),
  updated_at: z.string().nullable(),
  rate_cards: z.array(z.object({
    vehicle_type: z.enum(VEHICLE_TYPES),
    delivery_mode: z.enum(['MOTORBIKE', 'BUS_VAN', 'TRUCK']),
    options: z.array(catalogOptionSchema),
  })),
  zones: z.array(z.string()),
})

export type Catalog = z.infer<typeof catalogSchema>
export type CatalogGroup = Catalog['rate_cards'][number]
export type CatalogOption = z.infer<typeof catalogOptionSchema>
