import { createParser } from 'eventsource-parser'
import { refusalMessage } from './answers.js'
import { TokenRefusedError } from './token-refused-error.js'

// The public courier API as a rider's phone calls it (DESIGN 14): nothing else, so what the
// simulator does any courier app can do.

export interface Answer {
  status: number
  /** The answer's JSON, read through services/simulator/answers.ts. */
  body: unknown
}

export interface StreamEvent {
  event: string
  data: unknown
}

export function courierClient(api: string, token: string) {
  const authorization = `Bearer ${token}`
  /**
   * A JSON body, or a FormData sent as multipart/form-data (fetch writes its boundary). A 401
   * throws TokenRefusedError; `signal` abandons the call (a rider stopping does not wait on it).
   */
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown, signal?: AbortSignal): Promise<Answer> => {
    const response = await fetch(`${api}/courier${route}`, body === undefined
      ? { method, headers: { authorization }, signal }
      : body instanceof FormData
        ? { method, headers: { authorization }, body, signal }
        : { method, headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body), signal })
    const text = await response.text()
    const answer = text ? parseJson(text) : null
    if (response.status === 401) throw new TokenRefusedError(refusalMessage(answer) || 'token refused')
    return { status: response.status, body: answer }
  }
  return {
    call,
    /**
     * Follows `GET /courier/stream` until `signal` aborts, reconnecting after a second when it
     * drops; rejects with TokenRefusedError when the token is refused, which no reconnect mends.
     */
    async follow(onEvent: (event: StreamEvent) => void, signal: AbortSignal): Promise<void> {
      // The last notice heard: a reconnect asks for what came after it, as a browser's EventSource does.
      let lastEventId: string | undefined
      while (!signal.aborted) {
        try {
          const resume: Record<string, string> = lastEventId ? { 'last-event-id': lastEventId } : {}
          const response = await fetch(`${api}/courier/stream`, { headers: { authorization, ...resume }, signal })
          if (response.status === 401) throw new TokenRefusedError(refusalMessage(parseJson(await response.text())) || 'token refused')
          if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`)
          const parser = createParser({
            onEvent: (message) => {
              lastEventId = message.id ?? lastEventId
              onEvent({ event: message.event ?? 'message', data: parseJson(message.data) })
            },
          })
          const decoder = new TextDecoder()
          for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }))
        } catch (err) {
          if (err instanceof TokenRefusedError) throw err
          // Dropped or refused: GET /offers on each tick covers the gap.
        }
        if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    },
  }
}

export type CourierClient = ReturnType<typeof courierClient>

/**
 * Why the courier API at `api` cannot be used, in words that finish "the API at … ", or null when
 * it answers: a call without a token is its 401. Asked before any token is issued.
 */
export async function unreachable(api: string, timeoutMs = 5000): Promise<string | null> {
  try {
    const response = await fetch(`${api}/courier/me`, { signal: AbortSignal.timeout(timeoutMs) })
    await response.body?.cancel()
    return response.status === 401 ? null : `answered ${response.status} to GET /courier/me where the courier API answers 401; is --api its /v2 base?`
  } catch (err) {
    return `could not be reached (${failureOf(err, timeoutMs)})`
  }
}

/** What a failed fetch says underneath its "fetch failed": ECONNREFUSED, ENOTFOUND, no answer. */
export function failureOf(err: unknown, timeoutMs?: number): string {
  if (err instanceof Error && err.name === 'TimeoutError') return timeoutMs ? `no answer in ${timeoutMs / 1000} s` : 'no answer'
  const cause = err instanceof Error ? err.cause : undefined
  if (cause instanceof Error) return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message
  return err instanceof Error ? err.message : String(err)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
