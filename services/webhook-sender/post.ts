import type { Dispatcher } from 'undici'

/** What the receiver answered, or why there was no answer. */
export type Answer = { status: number; error: null } | { status: number | null; error: string }

/** A signed request, ready to go. */
export interface SignedRequest {
  url: URL
  body: string
  headers: Record<string, string>
}

const MAX_ERROR_LENGTH = 500
// The receiver's body is not ours to keep: reading this much of it keeps the connection for the
// next request; past it the connection is dropped instead.
const BODY_LIMIT = 4096

const answerOf = (status: number): Answer => (status >= 200 && status < 300 ? { status, error: null } : { status, error: `the endpoint answered ${status}` })
const failureOf = (err: unknown): Answer => ({ status: null, error: (err instanceof Error ? err.message : String(err ?? 'the connection ended without an answer')).slice(0, MAX_ERROR_LENGTH) })

/**
 * POSTs a signed body; undici follows no redirect, and nothing waits past `timeoutMs` from the
 * call: by then either the receiver's status has come (the body being read is cut short, the
 * status stands), or the request is aborted and the attempt fails. One dispatch with a handler of
 * its own and one plain timer: what `request()` adds (a body stream to drain, an AbortSignal with
 * its own timer per request) was a third of the sender's HTTP cost per delivery.
 */
export function postSigned(dispatcher: Dispatcher, request: SignedRequest, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    let status: number | null = null
    let received = 0
    let settled = false
    let controller: Dispatcher.DispatchController | null = null
    let timedOut: Error | null = null
    const settle = (answer: Answer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(answer)
    }
    // Once the status is in, what happens to the body no longer changes the outcome.
    const end = (err: unknown) => settle(status !== null ? answerOf(status) : failureOf(err))
    const timer = setTimeout(() => {
      timedOut = new Error(`timeout: the endpoint did not answer within ${timeoutMs} ms`)
      end(timedOut)
      controller?.abort(timedOut)
    }, timeoutMs)
    try {
      dispatcher.dispatch({
        origin: request.url.origin,
        path: `${request.url.pathname}${request.url.search}`,
        method: 'POST',
        body: request.body,
        headers: request.headers,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      }, {
        onRequestStart(started) {
          controller = started
          // Queued past the deadline: it never leaves.
          if (timedOut) started.abort(timedOut)
        },
        onResponseStart(_started, statusCode) {
          // An informational answer (103) comes before the real one.
          if (statusCode >= 200) status = statusCode
        },
        onResponseData(started, chunk) {
          received += chunk.length
          if (received > BODY_LIMIT) {
            end(null)
            started.abort(new Error('the response body is longer than the sender reads'))
          }
        },
        onResponseEnd() {
          end(null)
        },
        onResponseError(_started, err) {
          end(err)
        },
      })
    } catch (err) {
      end(err)
    }
  })
}
