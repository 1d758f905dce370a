import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../../shared/errors/validation-error.js'
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
export default async function quoteRoutes(app: FastifyInstance, { quoter }: { quoter: Quoter }) {
  app.post('/internal/quote', async (request) => {
    const body = request.body as { business_id?: unknown; request?: unknown } | null
    if (typeof body?.business_id !== 'string') throw new ValidationError([{ field: 'business_id', message: 'business_id must be a string' }])
    const quoteRequest = parseBody(quoteRequestSchema, body.request)
    const quote = await quoter.quote(body.business_id, quoteRequest)
    instruments().quotes.add(1, { pricing_model: quote.pricingModel })
    return toQuoteResponse(quote)
  })
}
