import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import consoleApp from '../../services/console/app.js'
import { consoleEnv, loadConfig } from '../../shared/config.js'
import { consoleServerOptions } from '../../services/console/server-options.js'
import { createConsoleUser } from '../../shared/console/users.js'
import type { ConsoleRole } from '../../shared/db/console-users.js'
import { insertOrders } from '../../shared/db/orders.js'
import { createPendingPlacement } from '../../shared/db/placements.js'
import type { Sql } from '../../shared/db/sql.js'
import { newOrderId, newUuid } from '../../shared/ids.js'
import { freePort } from './processes.js'
import { shipment } from './shipments.js'

/** A route the console serves, as registered: `/console/ops/orders/:id`. */
export interface ConsoleRoute { method: string; url: string }

export const TEST_SESSION_SECRET = 'test-console-session-secret-0123456789abcdef'
export const TEST_PASSWORD = 'a long enough password'

/**
 * The console as production builds it, on the test file's schema, listening on a free port of
 * 127.0.0.1 (a browser needs a real socket). `CONSOLE_PUBLIC_URL` is that address unless the
 * test sets its own (an https one turns the Secure cookie flag on).
 */
export async function startConsole(t: Test, env: Record<string, string>, extra: Record<string, string> = {}): Promise<{ app: FastifyInstance; url: string; routes: ConsoleRoute[] }> {
  const port = await freePort()
  const config = loadConfig(consoleEnv, {
    CONSOLE_SESSION_SECRET: TEST_SESSION_SECRET, CONSOLE_PUBLIC_URL: `http://localhost:${port}`,
    // Every test logs in from 127.0.0.1; the address limit has a test of its own.
    CONSOLE_LOGIN_LIMIT: '0',
    WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', ...env, ...extra,
  })
  const app = Fastify({ ...consoleServerOptions(config), logger: false })
  const routes: ConsoleRoute[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method, url: route.url })
  })
  await app.register(consoleApp, { config })
  await app.listen({ port, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://localhost:${port}`, routes }
}

/** One `created` order of the business in a settled placement, written directly: enough to open, cancel or hang events on. */
export async function seedOrder(sql: Sql, businessId: string, livemode = true): Promise<string> {
  const placementId = newUuid()
  const now = new Date()
  const id = newOrderId()
  await sql.begin(async (tx) => {
    await createPendingPlacement(tx, { id: placementId, businessId, livemode, idempotencyKey: null, requestHash: placementId, shipmentsJson: '[]' })
    await insertOrders(tx, { placementId, businessId, livemode, currency: 'NGN', history: [{ status: 'created', at: now.toISOString() }], createdAt: now }, [{
      id, position: 0, price: 150_000, pricingModel: 'rate_card', vehicleType: 'bike', optionId: null,
      optionLabel: 'Up to 5 kg', deliveryMode: 'MOTORBIKE', distanceKm: 12.5, fromZoneName: 'Island', toZoneName: 'Ikeja', shipment: shipment(),
      pickupLat: 6.4413, pickupLng: 3.4714, dropoffLat: 6.6018, dropoffLng: 3.3515, deliveryPin: null, trackingUrl: null, trackingToken: null,
    }])
  })
  return id
}

/** A console user with a password already set through the one-time link, as a person would. */
export async function consoleUser(sql: Sql, consoleUrl: string, input: { email: string; role: ConsoleRole; businessId?: string }): Promise<{ email: string; link: string }> {
  const created = await createConsoleUser(sql, 'test', { email: input.email, role: input.role, businessId: input.businessId ?? null }, consoleUrl)
  if (created.kind !== 'created') throw new Error(created.message)
  return { email: created.user.email, link: created.link }
}

/**
 * A browser without a browser, for the HTTP-level tests: keeps the session cookie, reads each
 * page's CSRF token, and posts forms the way the console's pages do.
 */
export class ConsoleClient {
  /** The cookies the console has set, by name (its session and its CSRF secret). */
  readonly cookies = new Map<string, string>()
  csrf = ''

  constructor(private readonly app: FastifyInstance) {}

  async get(url: string, headers: Record<string, string> = {}) {
    const response = await this.app.inject({ method: 'GET', url, headers: { ...this.headers(), ...headers } })
    this.keep(response)
    return response
  }

  /** Posts a form; `_csrf` is this client's last token unless the fields say otherwise (or leave it out with `null`). */
  async post(url: string, fields: Record<string, string | string[] | null> = {}, headers: Record<string, string> = {}) {
    const body = new URLSearchParams()
    const all: Record<string, string | string[] | null> = { _csrf: this.csrf, ...fields }
    for (const [name, value] of Object.entries(all)) {
      if (value === null) continue
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item)
    }
    const response = await this.app.inject({ method: 'POST', url, payload: body.toString(), headers: { ...this.headers(), 'content-type': 'application/x-www-form-urlencoded', ...headers } })
    this.keep(response)
    return response
  }

  /**
   * Posts a multipart form with one file, as the rate-card upload form does: `_csrf` is this
   * client's last token, in the action's query string as the page's form has it.
   */
  async postFile(url: string, file: { field: string; name: string; content: string }, csrf: string | null = this.csrf) {
    const boundary = `----console-test-${Math.random().toString(36).slice(2)}`
    const parts = [
      `--${boundary}\r\ncontent-disposition: form-data; name="_csrf"\r\n\r\n${this.csrf}\r\n`,
      `--${boundary}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.name}"\r\ncontent-type: application/json\r\n\r\n${file.content}\r\n`,
      `--${boundary}--\r\n`,
    ]
    const target = csrf === null ? url : `${url}?_csrf=${encodeURIComponent(csrf)}`
    const response = await this.app.inject({ method: 'POST', url: target, payload: parts.join(''), headers: { ...this.headers(), 'content-type': `multipart/form-data; boundary=${boundary}` } })
    this.keep(response)
    return response
  }

  /** Sets a password through the one-time link, as its owner would. */
  async setPassword(link: string, password = TEST_PASSWORD) {
    const token = new URL(link).searchParams.get('token') ?? ''
    await this.get(`/console/set-password?token=${token}`)
    const set = await this.post('/console/set-password', { token, password, confirm: password })
    if (set.statusCode !== 303) throw new Error(`set-password answered ${set.statusCode}`)
  }

  /** Logs in and opens the page the login lands on: the new session's first page and its form token. */
  async logIn(user: { email: string }, password = TEST_PASSWORD) {
    await this.get('/console/login')
    const login = await this.post('/console/login', { email: user.email, password })
    if (login.statusCode !== 303) throw new Error(`login answered ${login.statusCode}`)
    await this.get(String(login.headers.location))
    return login
  }

  /** The `cookie` header a browser would send: every cookie kept, or the one a test set by hand. */
  get cookie(): string | null {
    return this.cookies.size ? [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') : null
  }

  set cookie(header: string | null) {
    this.cookies.clear()
    for (const pair of header ? header.split('; ') : []) {
      const at = pair.indexOf('=')
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
  }

  private headers(): Record<string, string> {
    const cookie = this.cookie
    return cookie ? { cookie } : {}
  }

  private keep(response: { headers: Record<string, unknown>; body: string }) {
    const setCookie = response.headers['set-cookie']
    for (const line of Array.isArray(setCookie) ? setCookie : typeof setCookie === 'string' ? [setCookie] : []) {
      const pair = String(line).split(';')[0]
      const at = pair.indexOf('=')
      const name = pair.slice(0, at)
      const value = pair.slice(at + 1)
      // An expiring cookie (logout) is dropped, as a browser drops it.
      if (value === '' || /;\s*expires=Thu, 01 Jan 1970/i.test(String(line))) this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(response.body)
    if (token) this.csrf = token[1]
  }
}
