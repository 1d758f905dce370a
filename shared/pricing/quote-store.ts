import { createHmac, timingSafeEqual } from 'node:crypto'
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

const MAC_LENGTH = 43 // base64url of a 32-byte HMAC-SHA256

/**
 * Quotes in Redis under the deployment's prefix, each with its own TTL: the quote path writes
 * no Postgres row. The prefix's `{…}` hash tag keeps them in one cluster slot, so the worker
 * reads a placement's quotes with one MGET.
 *
 * Redis is not trusted with the price: each value is `MAC.JSON`, the MAC an HMAC-SHA256 under
 * `signingKey` of the key's quote id and the JSON. A value changed, or moved under another id,
 * by anyone without the key does not verify and reads as no quote at all.
 */
export function createQuoteStore(redis: RedisClient, prefix: string, signingKey: string): QuoteStore {
  const key = (id: string) => `${prefix}:quote:${id}`
  const mac = (id: string, json: string) => createHmac('sha256', signingKey).update(id).update('\n').update(json).digest('base64url')
  const verified = (id: string, value: string): string | null => {
    const json = value.slice(MAC_LENGTH + 1)
    const given = Buffer.from(value.slice(0, MAC_LENGTH))
    const expected = Buffer.from(mac(id, json))
    return value[MAC_LENGTH] === '.' && given.length === expected.length && timingSafeEqual(given, expected) ? json : null
  }
  return {
    async hold(quote) {
      const ttlS = Math.max(1, Math.ceil((Date.parse(quote.expiresAt) - Date.now()) / 1000)) + KEPT_AFTER_EXPIRY_S
      const json = JSON.stringify(quote)
      try {
        await redis.set(key(quote.id), `${mac(quote.id, json)}.${json}`, 'EX', ttlS)
        return true
      } catch {
        return false
      }
    },
    async find(ids) {
      const held = new Map<string, HeldQuote>()
      if (ids.length === 0) return held
      const values = await redis.mget(ids.map(key))
      values.forEach((value, index) => {
        const json = value === null ? null : verified(ids[index], value)
        if (json === null) return
        const parsed = heldQuoteSchema.safeParse(JSON.parse(json))
        if (parsed.success && parsed.data.id === ids[index]) held.set(parsed.data.id, parsed.data)
      })
      return held
    },
  }
}
