import { errorCodes, type FastifyInstance, type FastifyReply } from 'fastify'
import fp from 'fastify-plugin'

/** How often the requests in flight are looked at: a twentieth of the bound, within 5 ms – 1 s. */
export function sweepEveryMs(timeoutMs: number): number {
  return Math.min(1000, Math.max(5, Math.floor(timeoutMs / 20)))
}

/**
 * No handler outlives REQUEST_TIMEOUT_MS: past it the request is answered with fastify's
 * FST_ERR_HANDLER_TIMEOUT (each service's error handler makes it a 503 in its own body), or its
 * connection is cut if the answer had begun, whatever the handler still waits on.
 *
 * fastify's `handlerTimeout` does the same with a timer and an AbortController per request, and
 * aborts the controller when every request closes, which builds a DOMException with its stack
 * each time: a fifth of the gateway's CPU on a location ping (docs/performance.md). Nothing here
 * reads `request.signal`, so one timer sweeps the requests in flight instead, in the order they
 * came: their deadlines are in that order too, so a sweep stops at the first one not yet due.
 */
async function handlerDeadline(app: FastifyInstance, { timeoutMs }: { timeoutMs: number }) {
  const inFlight = new Map<FastifyReply, number>()

  app.addHook('onRequest', (_request, reply, done) => {
    inFlight.set(reply, performance.now() + timeoutMs)
    done()
  })
  app.addHook('onResponse', (_request, reply, done) => {
    inFlight.delete(reply)
    done()
  })

  function sweep(): void {
    const now = performance.now()
    for (const [reply, deadline] of inFlight) {
      // Answered (or hijacked, as an event stream), or hung up on: nothing to bound.
      if (reply.sent || reply.raw.destroyed) {
        inFlight.delete(reply)
        continue
      }
      if (deadline > now) return
      inFlight.delete(reply)
      const err = new errorCodes.FST_ERR_HANDLER_TIMEOUT(timeoutMs, reply.request.routeOptions.url ?? reply.request.url)
      if (reply.raw.headersSent) reply.raw.destroy(err)
      else void reply.send(err)
    }
  }
  // When the service stops, the answers still to come close their connections: a keep-alive
  // client calls another replica next, and its idle connection does not hold the stop up until
  // the keep-alive timeout (72 s, past runService's 30 s limit).
  app.addHook('preClose', (done) => {
    for (const reply of inFlight.keys()) if (!reply.raw.headersSent) reply.raw.setHeader('connection', 'close')
    done()
  })

  const timer = setInterval(sweep, sweepEveryMs(timeoutMs))
  timer.unref()
  app.addHook('onClose', async () => clearInterval(timer))
}

export default fp(handlerDeadline, { name: 'handler-deadline' })
