import { context, propagation } from '@opentelemetry/api'
import { Pool, type Dispatcher } from 'undici'
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
      return await send(pool, { method, path, headers, body: payload === undefined ? undefined : JSON.stringify(payload) })
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
 * One request on the pool and its whole answer as text, through a dispatch with a handler of its
 * own rather than `request()`, which builds a body stream per call for the caller to read (the
 * webhook sender's POST measured that stream at a third of its HTTP cost). The pool's header and
 * body timeouts bound it as they bound `request()`.
 */
function send(pool: Pool, options: Dispatcher.DispatchOptions): Promise<PricingAnswer> {
  return new Promise((resolve, reject) => {
    let statusCode = 0
    const chunks: Buffer[] = []
    try {
      pool.dispatch(options, {
        // Present so undici takes this for a handler of its current form (without it, the legacy one).
        onRequestStart() {},
        onResponseStart(_controller, status) {
          // An informational answer (1xx) comes before the real one.
          if (status >= 200) statusCode = status
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk)
        },
        onResponseEnd() {
          resolve({ statusCode, body: chunks.length === 1 ? chunks[0].toString() : Buffer.concat(chunks).toString() })
        },
        onResponseError(_controller, err) {
          reject(err)
        },
      })
    } catch (err) {
      reject(err)
    }
  })
}

/**
 * Turns a non-200 answer of the pricing service into the API's error. A 400 is the caller's
 * refusal, relayed with its `message` and `errors`; anything else is pricing's trouble, a 503.
 */
export function pricingFailure(answer: PricingAnswer): ApiError {
  const refusal = answer.statusCode === 400 ? relayedApiError(400, answer.body) : null
  return refusal ?? new ApiError(503, 'Pricing is temporarily unavailable, retry shortly')
}
