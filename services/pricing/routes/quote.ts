import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { toHeldQuote } from '../../../shared/pricing/held-quote.js'
import { billableWeight } from '../../../shared/pricing/pipeline.js'
import type { QuoteStore } from '../../../shared/pricing/quote-store.js'
import type { Quoter } from '../../../shared/pricing/quoter.js'
import { toQuoteResponse } from '../../../shared/pricing/quote-response.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { quoteRequestSchema } from '../../../shared/schemas/quote.js'
import { instruments } from '../../../shared/telemetry/metrics.js'

/**
 * `POST /internal/quote` `{business_id, request}` → the spec's quote body, or a 400 error body.
 * The gateway validated `request` already; parsing again costs little and keeps this service
 * safe to call on its own.
 */
interface QuoteRouteOptions {
  quoter: Quoter
  quotes: QuoteStore
  quoteTtlS: number
}

// What the gateway sends: whose quote it is, in which mode, and the caller's body (checked on its own below).
const internalQuoteSchema = z.object({
  business_id: z.string({ error: 'business_id must be a string' }),
  livemode: z.boolean({ error: 'livemode must be a boolean value' }).default(true),
  request: z.unknown(),
}, { error: 'body must be a JSON object' })

export default async function quoteRoutes(app: FastifyInstance, { quoter, quotes, quoteTtlS }: QuoteRouteOptions) {
  app.post('/internal/quote', async (request) => {
    const body = parseBody(internalQuoteSchema, request.body)
    const parsed = parseBody(quoteRequestSchema, body.request)
    // The weight priced and held is the billable weight, as a placement's shipment has it.
    const quoteRequest = { ...parsed, weight: billableWeight(parsed.weight) }
    const priced = await quoter.quote(body.business_id, quoteRequest)
    instruments().quotes.add(1, { pricing_model: priced.quote.pricingModel })
    // Held in Redis with its TTL; without Redis the quote still answers, with no id to lock it.
    // A test key's quote is a test quote: a live shipment cannot name it, nor the reverse.
    const held = toHeldQuote({ businessId: body.business_id, livemode: body.livemode }, quoteRequest, priced, new Date(), quoteTtlS)
    return toQuoteResponse(priced.quote, (await quotes.hold(held)) ? held : null)
  })
}
