import { createParser } from 'eventsource-parser'

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
  /** A JSON body, or a FormData sent as multipart/form-data (fetch writes its boundary). */
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${api}/courier${route}`, body === undefined
      ? { method, headers: { authorization } }
      : body instanceof FormData
        ? { method, headers: { authorization }, body }
        : { method, headers: { authorization, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const text = await response.text()
    return { status: response.status, body: text ? parseJson(text) : null }
  }
  return {
    call,
    /** Follows `GET /courier/stream` until `signal` aborts, reconnecting after a second when it drops. */
    async follow(onEvent: (event: StreamEvent) => void, signal: AbortSignal): Promise<void> {
      while (!signal.aborted) {
        try {
          const response = await fetch(`${api}/courier/stream`, { headers: { authorization }, signal })
          if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`)
          const parser = createParser({ onEvent: (message) => onEvent({ event: message.event ?? 'message', data: parseJson(message.data) }) })
          const decoder = new TextDecoder()
          for await (const chunk of response.body) parser.feed(decoder.decode(chunk, { stream: true }))
        } catch {
          // Dropped or refused: GET /offers on each tick covers the gap.
        }
        if (!signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1000))
      }
    },
  }
}

export type CourierClient = ReturnType<typeof courierClient>

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
