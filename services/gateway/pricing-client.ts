import { context, propagation } from '@opentelemetry/api'
import { Pool } from 'undici'
import { ApiError } from '../../shared/errors/api-error.js'
import { relayedApiError } from '../../shared/errors/error-body.js'
import { internalAuthorization } from '../../shared/http/internal-token.js'
import type { QuoteRequest } from '../../shared/schemas/quote.js'

export interface PricingAnswer {
  statusCode: number
  /** The pricing service's JSON, passed to the caller unparsed on success. */
  body: string
}

/**
 * Talks to the pricing service over one keep-alive pool. Successful answers are relayed as
 * bytes: the gateway has nothing to add to a quote, so it need not parse and re-serialise it.
 */
export function createPricingClient(baseUrl: string, options: { connections: number; timeoutMs: number; token: string }) {
  const pool = new Pool(baseUrl, {
    connections: options.connections,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  })

  const authorization = internalAuthorization(options.token)

  async function call(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<PricingAnswer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', authorization }
    propagation.inject(context.active(), headers)
    try {
      const response = await pool.request({ method, path, headers, body: payload === undefined ? undefined : JSON.stringify(payload) })
      return { statusCode: response.statusCode, body: await response.body.text() }
    } catch {
      throw new ApiError(503, 'Pricing is temporarily unavailable, retry shortly')
    }
  }

  return {
    quote: (caller: { businessId: string; livemode: boolean }, request: QuoteRequest) =>
      call('POST', '/internal/quote', { business_id: caller.businessId, livemode: caller.livemode, request }),
    catalog: (businessId: string) => call('GET', `/internal/catalog/${encodeURIComponent(businessId)}`),
    close: () => pool.close(),
  }
}

export type PricingClient = ReturnType<typeof createPricingClient>

/**
 * Turns a non-200 answer of the pricing service into the API's error. A 400 is the caller's
 * refusal, relayed with its `message` and `errors`; anything else is pricing's trouble, a 503.
 */
export function pricingFailure(answer: PricingAnswer): ApiError {
  const refusal = answer.statusCode === 400 ? relayedApiError(400, answer.body) : null
  return refusal ?? new ApiError(503, 'Pricing is temporarily unavailable, retry shortly')
}
