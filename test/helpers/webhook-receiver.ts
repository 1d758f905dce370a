import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Webhook } from 'standardwebhooks'
import type { Test } from 'tap'
import { errorMessage } from '../../shared/errors/error-message.js'

/**
 * A real webhook receiver for tests: a node:http server on 127.0.0.1 that, as an integrator's
 * would, verifies every delivery with the `standardwebhooks` package against each secret its
 * route knows, and checks the content type and the user agent of section 9.
 */

export interface Receipt {
  /** The route (URL path) the delivery came to. */
  path: string
  /** `webhook-id`: the event id. */
  id: string
  headers: IncomingHttpHeaders
  body: string
  /** `Webhook(secret).verify(body, headers)` passed for every secret the route knew at the time. */
  verified: boolean
  /** content-type application/json and user-agent courier-webhooks/1. */
  headersOk: boolean
  /** Why it was not verified (the verify error), or null. */
  problem: string | null
  /** The status the receiver answered, or null while it is held or when it never answers. */
  answered: number | null
  /** Whether the answer was written to a connection still open. */
  completed: boolean
  /** The sender went away (a timeout, a crash) before the answer was written. */
  aborted: boolean
}

/** What a route answers a delivery: a status (after `holdMs`), a redirect, or nothing ever. */
export type Answer = number | { status: number; holdMs?: number; headers?: Record<string, string> } | 'hang'

export interface Route {
  /** The secrets a delivery must verify with, each on its own (two during a rotation's overlap). */
  secrets: string[]
  /** `attempt`: how many deliveries of this event id this route has had, this one included. */
  respond: (receipt: Receipt, attempt: number) => Answer
}

export interface Receiver {
  url: (path: string) => string
  route: (path: string, route: Route) => Route
  receipts: Receipt[]
  /** The receipts of one route, in arrival order. */
  at: (path: string) => Receipt[]
  /** Deliveries received, not yet answered, and whose sender is still waiting. */
  inFlight: () => Receipt[]
  /** Closes the connection of every delivery held unanswered: its sender sees the attempt fail. */
  dropHeld: () => void
}

const EXPECTED_HEADERS = { 'content-type': 'application/json', 'user-agent': 'courier-webhooks/1' }

export function verifyWith(secret: string, body: string, headers: IncomingHttpHeaders): void {
  new Webhook(secret).verify(body, headers as Record<string, string>)
}

export async function startReceiver(t: Test): Promise<Receiver> {
  const routes = new Map<string, Route>()
  const receipts: Receipt[] = []
  const open = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!
      const body = Buffer.concat(chunks).toString('utf8')
      const route = routes.get(path)
      const receipt: Receipt = {
        path, id: String(req.headers['webhook-id'] ?? ''), headers: req.headers, body,
        verified: false, headersOk: false, problem: null, answered: null, completed: false, aborted: false,
      }
      receipt.headersOk = Object.entries(EXPECTED_HEADERS).every(([name, value]) => req.headers[name] === value)
      try {
        if (!route || route.secrets.length === 0) throw new Error(`no secret for ${path}`)
        for (const secret of route.secrets) verifyWith(secret, body, req.headers)
        receipt.verified = true
      } catch (err) {
        receipt.problem = errorMessage(err)
      }
      receipts.push(receipt)
      res.on('close', () => { if (!res.writableFinished) receipt.aborted = true })
      const attempt = receipts.filter((r) => r.path === path && r.id === receipt.id).length
      const answer: Answer = route ? route.respond(receipt, attempt) : 404
      if (answer === 'hang') {
        open.add(res)
        return
      }
      const { status, holdMs = 0, headers = {} } = typeof answer === 'number' ? { status: answer } : answer
      const reply = () => {
        open.delete(res)
        if (res.destroyed || req.socket.destroyed) {
          receipt.aborted = true
          return
        }
        receipt.answered = status
        res.writeHead(status, headers).end(() => { receipt.completed = !req.socket.destroyed })
      }
      open.add(res)
      if (holdMs > 0) setTimeout(reply, holdMs)
      else reply()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  t.teardown(async () => {
    for (const res of open) res.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    route: (path, route) => {
      routes.set(path, route)
      return route
    },
    receipts,
    at: (path) => receipts.filter((receipt) => receipt.path === path),
    inFlight: () => receipts.filter((receipt) => receipt.answered === null && !receipt.aborted),
    dropHeld: () => {
      for (const res of open) res.destroy()
    },
  }
}
