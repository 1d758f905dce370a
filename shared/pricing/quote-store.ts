import { z } from 'zod'
import { VEHICLE_TYPES } from '../courier.js'
import type { RedisClient } from '../redis.js'

const point = z.object({ lat: z.number(), lng: z.number() })

/**
 * A quote as the pricing service holds it: whose it is, what was asked (the billable weight,
 * vehicle and option as sent, both ends as resolved) and what it costs, in kobo. Business and
 * mode make another account's quote id unknown; the rest is what a shipment must match.
 */
export const heldQuoteSchema = z.object({
  id: z.string(),
  businessId: z.string(),
  livemode: z.boolean(),
  vehicleType: z.enum(VEHICLE_TYPES).nullable(),
  optionId: z.string().nullable(),
  weight: z.number(),
  pickup: point,
  dropoff: point,
  quote: z.object({
    price: z.number().int().nonnegative(),
    distanceKm: z.number(),
    currency: z.string(),
    pricingModel: z.enum(['rate_card', 'distance']),
    optionId: z.string().nullable(),
    optionLabel: z.string().nullable(),
    deliveryMode: z.enum(['MOTORBIKE', 'BUS_VAN', 'TRUCK']),
    fromZoneName: z.string().nullable(),
    toZoneName: z.string().nullable(),
  }),
  expiresAt: z.iso.datetime(),
})

export type HeldQuote = z.infer<typeof heldQuoteSchema>

export interface QuoteStore {
  /** Holds a quote; false when Redis could not take it (the quote then answers without an id). */
  hold(quote: HeldQuote): Promise<boolean>
  /** The quotes still held among `ids`, by id. Throws when Redis is out of reach: a fault, retried. */
  find(ids: string[]): Promise<Map<string, HeldQuote>>
}

// Kept an hour past expiry, so a shipment is told "has expired", not "is unknown" (DESIGN 13.4).
const KEPT_AFTER_EXPIRY_S = 3600

/**
 * Quotes in Redis under the deployment's prefix, each with its own TTL: the quote path writes
 * no Postgres row. The prefix's `{…}` hash tag keeps them in one cluster slot, so the worker
 * reads a placement's quotes with one MGET.
 */
export function createQuoteStore(redis: RedisClient, prefix: string): QuoteStore {
  const key = (id: string) => `${prefix}:quote:${id}`
  return {
    async hold(quote) {
      const ttlS = Math.max(1, Math.ceil((Date.parse(quote.expiresAt) - Date.now()) / 1000)) + KEPT_AFTER_EXPIRY_S
      try {
        await redis.set(key(quote.id), JSON.stringify(quote), 'EX', ttlS)
        return true
      } catch {
        return false
      }
    },
    async find(ids) {
      const held = new Map<string, HeldQuote>()
      if (ids.length === 0) return held
      const values = await redis.mget(ids.map(key))
      for (const value of values) {
        if (value === null) continue
        const parsed = heldQuoteSchema.safeParse(JSON.parse(value))
        if (parsed.success) held.set(parsed.data.id, parsed.data)
      }
      return held
    },
  }
}
