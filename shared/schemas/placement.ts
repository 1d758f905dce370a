import { z } from 'zod'

/** The answer of a placement that created orders (201). */
export const placementResultSchema = z.object({
  status: z.literal('Success'),
  description: z.string(),
  currency: z.string(),
  charged_total: z.number(),
  orders: z.array(z.object({ order_id: z.string(), price: z.number() })),
  placement_id: z.string(),
})

/** The answer of a placement still being processed (202 on `GET /v2/business/placements/{id}`). */
export const placementPendingSchema = z.object({ status: z.literal('pending'), placement_id: z.string() })
