import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import helmet from 'helmet'
import type { ConsoleConfig } from '../../shared/config.js'
import { loggerOptions, quietRequests } from '../../shared/http/observability.js'
import { requestTimeouts } from '../../shared/http/run-service.js'
import { trustProxyOption } from '../../shared/http/trust-proxy.js'
import { cspDirectives } from './csp.js'
import { html } from './html.js'
import type { Frame } from './pages/layout.js'
import { sendPage } from './reply.js'

/** DESIGN 12: on plain http://localhost the browser has no TLS to offer, so no HSTS, no upgrade and no Secure cookies. */
export function servedLocally(config: Pick<ConsoleConfig, 'CONSOLE_PUBLIC_URL'>): boolean {
  return /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(config.CONSOLE_PUBLIC_URL)
}

/** helmet's settings for every console answer: the app's plugin and the answer below use these. */
export function helmetOptions(config: Pick<ConsoleConfig, 'CONSOLE_PUBLIC_URL'>) {
  const local = servedLocally(config)
  return { contentSecurityPolicy: { directives: cspDirectives(local) }, hsts: !local }
}

/** The page of an address that names nothing. */
export function notFoundPage(path: string, loggedIn: boolean) {
  return {
    title: 'Not found', path,
    body: html`<p>There is nothing at this address${loggedIn ? '' : ', or you are not logged in'}. <a href="/console">Back to the console</a></p>`,
  }
}

const NO_SESSION: Frame = { user: null, csrf: '', flash: null }

/** Options fixed when the server is constructed; `main` and the tests both use these. */
export function consoleServerOptions(config: ConsoleConfig): FastifyServerOptions {
  const securityHeaders = helmet(helmetOptions(config))
  return {
    logger: loggerOptions(config.LOG_LEVEL),
    ...quietRequests,
    ...requestTimeouts(config),
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    return503OnClosing: true,
    // A path the router cannot read (broken percent-encoding, a segment past maxParamLength, such
    // as a long tracking token) names nothing: the not-found page, where fastify would answer its
    // own JSON. No hook runs for it, so no session is read and helmet's headers are set here.
    frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const known = err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      if (!known) request.log.error({ err }, 'unhandled framework error')
      securityHeaders(request.raw, reply.raw, () => {})
      void sendPage(reply, known ? 404 : 500, NO_SESSION, known
        ? notFoundPage(request.url, false)
        : { title: 'Error', path: request.url, body: html`<p role="alert">Something went wrong on our side. Try again in a moment.</p>` })
    },
  }
}
