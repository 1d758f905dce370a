import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { acceptOffer, changeShift, declineOffer, moveOrder, ordersHeldBy, pendingOffers, photoTooLarge, reportLocation, type CourierDesk, type CourierMove } from '../../../shared/couriers/actions.js'
import { publicBaseUrl } from '../../../shared/config.js'
import type { CourierShift } from '../../../shared/courier.js'
import { logInCourier } from '../../../shared/couriers/login.js'
import { shiftOf } from '../../../shared/couriers/positions.js'
import { findActiveOrderIdsOfCourier } from '../../../shared/db/couriers.js'
import type { Order } from '../../../shared/db/orders.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { errorCode } from '../../../shared/errors/error-message.js'
import { pinGiven, reasonRequestSchema } from '../../../shared/schemas/courier.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { PHOTO_MAX_BYTES } from '../../../shared/storage/photos.js'
import { courierSessions, type CourierSession } from '../courier-session.js'
import { cspDirectives } from '../csp.js'
import type { ConsoleDeps } from '../deps.js'
import { FormError, readForm } from '../forms.js'
import { html } from '../html.js'
import { COURIER_CSS, COURIER_JS, courierLayout, homePage, loginPage, offerShownSchema, type CourierFrame, type CourierHome } from '../pages/courier-app.js'
import { COURIER_PATH } from '../cookies.js'
import { csrfTokenFor } from '../reply.js'
import type { Flash } from '../session-store.js'

// The courier web app (DESIGN 14) at /courier: log in with phone and one-time code, go available
// or offline, answer the offer, pick up, deliver with the PIN and a photo, fail. Every step is
// the shared one of shared/couriers/actions.ts, exactly as the courier API runs it; a refusal
// (an ApiError) is shown to the rider as it is worded there.

export const COURIER_LOGIN_REFUSED = 'The phone number or code is wrong or was used already, or logins for this phone are locked for 15 minutes after 5 wrong codes.'

const loginSchema = z.object({ _csrf: z.string(), phone: z.string().max(64).default(''), code: z.string().trim().max(16).default('') })
const shiftSchema = z.object({ _csrf: z.string(), status: z.enum(['available', 'offline']) })
const locationSchema = z.object({
  _csrf: z.string(),
  latitude: z.coerce.number().min(-90).max(90),
  longitude: z.coerce.number().min(-180).max(180),
  accuracy_m: z.coerce.number().min(0).max(100_000).optional(),
})
const reasonForm = z.object({ _csrf: z.string(), reason: z.string() })
const csrfOnly = z.object({ _csrf: z.string() })
const pinSchema = z.object({ pin: z.string().max(8).optional() })

type Params = { Params: { id: string } }

export default async function courierAppRoutes(app: FastifyInstance, deps: ConsoleDeps & { secureCookies: boolean }) {
  const { sql, redis, config } = deps
  const desk: CourierDesk = {
    sql, redis, prefix: config.QUEUE_PREFIX, dispatch: deps.dispatch, photos: deps.photos,
    publicBaseUrl: publicBaseUrl(config), warn: (err, message) => app.log.warn({ err }, message),
  }
  const sessions = courierSessions(sql, { ttlMs: config.CONSOLE_SESSION_TTL_H * 3600 * 1000, secure: deps.secureCookies })
  // The home page runs the app's one script, from this origin only.
  const withScript = { helmet: { contentSecurityPolicy: { directives: cspDirectives(!deps.secureCookies, 'self') } } }
  const limited = config.CONSOLE_LOGIN_LIMIT > 0 ? { config: { rateLimit: { max: config.CONSOLE_LOGIN_LIMIT, timeWindow: 60_000 } } } : {}

  app.decorateRequest('courierSession', null)
  app.addHook('preHandler', async (request, reply) => {
    if (!request.url.startsWith('/courier/assets/')) request.courierSession = await sessions.load(request, reply)
  })
  app.setErrorHandler((err: { statusCode?: number; code?: string; message: string }, request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
    // 503: a dependency away (Redis for a location ping), not a bug.
    if (status === 503) request.log.warn({ err }, 'courier app request waited on a dependency')
    else if (status >= 500) request.log.error({ err }, 'courier app request failed')
    const text = err.code?.startsWith('FST_CSRF') ? 'This form has expired. Go back, reload the page and try again.'
      : err.code === 'CONSOLE_LOGIN_LIMIT' ? err.message
        : err instanceof FormError ? 'The form could not be read. Go back, reload the page and try again.'
          : status === 413 ? 'That upload is too large.' : status === 503 ? 'The service is busy right now. Try again in a moment.' : 'Something went wrong. Try again in a moment.'
    return sendCourierPage(reply, status, frameOf(request, reply), { title: status === 403 ? 'Refused' : 'Error', body: html`<p role="alert">${text}</p><p><a href="/courier">Back</a></p>` })
  })

  app.get('/courier/assets/courier.css', async (_request, reply) => reply.type('text/css').header('cache-control', 'public, max-age=3600').send(COURIER_CSS))
  app.get('/courier/assets/courier.js', async (_request, reply) => reply.type('text/javascript').header('cache-control', 'public, max-age=3600').send(COURIER_JS))

  app.get<{ Querystring: { logged_out?: string } }>('/courier/login', async (request, reply) => {
    if (request.courierSession) return reply.code(303).redirect('/courier')
    const frame = frameOf(request, reply)
    if (request.query.logged_out !== undefined) frame.flash = { kind: 'ok', text: 'You are logged out.' }
    return sendCourierPage(reply, 200, frame, { title: 'Log in', body: loginPage(frame, {}) })
  })

  // Each attempt counts against the phone in the database and against the address here.
  app.post('/courier/login', limited, async (request, reply) => {
    const input = readForm(loginSchema, request.body)
    const outcome = await logInCourier(sql, input.phone, input.code)
    if (outcome.kind === 'ok') {
      await sessions.start(request, reply, outcome.courier.id)
      return reply.code(303).redirect('/courier')
    }
    const frame = frameOf(request, reply)
    return sendCourierPage(reply, 401, frame, { title: 'Log in', body: loginPage(frame, { phone: input.phone, error: COURIER_LOGIN_REFUSED }) })
  })

  app.post('/courier/logout', async (request, reply) => {
    await sessions.end(request, reply)
    return reply.code(303).redirect('/courier/login?logged_out')
  })

  app.get('/courier', withScript, async (request, reply) => {
    const session = request.courierSession
    if (!session) return reply.code(303).redirect('/courier/login')
    const home = await homeOf(session)
    const frame = frameOf(request, reply)
    if (session.flash) await sessions.flash(session, null)
    return sendCourierPage(reply, 200, frame, { title: 'Your shift', body: homePage(frame, home, new Date(), config.TRACKING_TIME_ZONE), home })
  })

  // The script's two calls: a JSON answer (401 without a session), never a page.
  app.get('/courier/state', async (request, reply) => {
    const session = request.courierSession
    if (!session) return reply.code(401).send({ state: null })
    const [shift, offers, active] = await Promise.all([shiftIfKnown(session.courier.id), pendingOffers(desk, session.courier.id), findActiveOrderIdsOfCourier(sql, session.courier.id)])
    return { state: stateOf(shift, offers.map((offer) => String(offer.offer_id)), active) }
  })

  app.post('/courier/location', async (request, reply) => {
    const session = request.courierSession
    if (!session) return reply.code(401).send()
    const input = readForm(locationSchema, request.body)
    const recorded = await reportLocation(desk, session.courier, { latitude: input.latitude, longitude: input.longitude, at: new Date().toISOString() })
    return reply.code(recorded === 'too_soon' ? 429 : 204).send()
  })

  /** A step of the signed-in courier: its outcome, or the step's refusal, shown on the home page. */
  const step = (path: string, run: (session: CourierSession, request: FastifyRequest<Params>) => Promise<string>) => {
    app.post<Params>(path, async (request, reply) => {
      const session = request.courierSession
      if (!session) return reply.code(303).redirect('/courier/login')
      let flash: Flash
      try {
        flash = { kind: 'ok', text: await run(session, request) }
      } catch (err) {
        if (!(err instanceof ApiError)) throw err
        flash = { kind: 'error', text: err.message }
      }
      await sessions.flash(session, flash)
      return reply.code(303).redirect('/courier')
    })
  }
  step('/courier/shift', async (session, request) => {
    const { status } = readForm(shiftSchema, request.body)
    await changeShift(desk, session.courier, status)
    return status === 'available' ? 'You are available: offers near you appear here.' : 'You are offline: no more offers until you go available.'
  })
  step('/courier/offers/:id/accept', async (session, request) => {
    readForm(csrfOnly, request.body)
    const order = await acceptOffer(desk, session.courier, request.params.id)
    return `Order ${order.id} is yours: go to the pickup.`
  })
  step('/courier/offers/:id/decline', async (session, request) => {
    readForm(csrfOnly, request.body)
    await declineOffer(desk, session.courier.id, request.params.id, null)
    return 'Offer declined.'
  })
  const move = (path: string, read: (request: FastifyRequest<Params>) => Promise<CourierMove>, done: (order: Order) => string) => {
    step(`/courier/orders/:id/${path}`, async (session, request) => done(await moveOrder(desk, session.courier, request.params.id, await read(request))))
  }
  move('pickup', async (request) => { readForm(csrfOnly, request.body); return { to: 'picked_up' } }, (order) => `Picked up ${order.id}: now take it to the recipient.`)
  move('deliver', readDelivery, (order) => `Delivered ${order.id}. Well done.`)
  // The reason is read by the API's own rule, so a blank one is the API's refusal, shown on the page.
  move('fail', async (request) => ({ to: 'failed', reason: parseBody(reasonRequestSchema, { reason: readForm(reasonForm, request.body).reason }).reason }), (order) => `${order.id} is marked failed: take it back to the sender.`)
  move('return', async (request) => { readForm(csrfOnly, request.body); return { to: 'returned' } }, (order) => `${order.id} is back with the sender.`)

  /** The courier's shift; null while Redis is away, so their orders still show and move. */
  function shiftIfKnown(courierId: string): Promise<CourierShift | null> {
    return shiftOf(redis, desk.prefix, courierId).catch((err: unknown) => {
      desk.warn(err, 'courier shift unavailable')
      return null
    })
  }

  async function homeOf(session: CourierSession): Promise<CourierHome> {
    const courierId = session.courier.id
    const [shift, offers, orders] = await Promise.all([shiftIfKnown(courierId), pendingOffers(desk, courierId), ordersHeldBy(desk, courierId)])
    const offer = offers.length > 0 ? offerShownSchema.parse(offers[0]) : null
    return { shift, offer, orders, state: stateOf(shift, offers.map((shown) => String(shown.offer_id)), orders) }
  }
}

/** What the home page shows, in one string: the script reloads the page when it changes. */
function stateOf(shift: string | null, offerIds: string[], active: { id: string; status: string }[]): string {
  return [shift ?? 'unknown', offerIds.join(','), active.map((order) => `${order.id}:${order.status}`).join(',')].join('|')
}

/**
 * The delivery form: multipart (`pin`, `photo` from the camera), its CSRF token checked from the
 * query string before the body is read. An empty file input (no photo taken) sends no photo.
 */
async function readDelivery(request: FastifyRequest): Promise<CourierMove> {
  if (!request.isMultipart()) return { to: 'delivered', pin: pinGiven(readForm(pinSchema.extend({ _csrf: z.string() }), request.body).pin), photo: null }
  const fields: Record<string, string> = {}
  let photo: Buffer | null = null
  try {
    for await (const part of request.parts({ limits: { fileSize: PHOTO_MAX_BYTES, files: 1, fields: 4, fieldSize: 1024, parts: 6 } })) {
      if (part.type === 'file') {
        const bytes = await part.toBuffer()
        if (part.fieldname === 'photo' && bytes.length > 0) photo = bytes
      } else if (typeof part.value === 'string') {
        fields[part.fieldname] = part.value
      }
    }
  } catch (err) {
    if (errorCode(err) === 'FST_REQ_FILE_TOO_LARGE') throw photoTooLarge()
    throw new ApiError(400, 'The delivery form could not be read; take the photo again and retry.')
  }
  const pin = pinSchema.safeParse(fields)
  return { to: 'delivered', pin: pinGiven(pin.success ? pin.data.pin : undefined), photo }
}

function frameOf(request: FastifyRequest, reply: FastifyReply): CourierFrame {
  return { courier: request.courierSession?.courier ?? null, csrf: csrfTokenFor(request, reply, COURIER_PATH), flash: request.courierSession?.flash ?? null }
}

function sendCourierPage(reply: FastifyReply, statusCode: number, frame: CourierFrame, page: Parameters<typeof courierLayout>[1]) {
  return reply.code(statusCode).type('text/html; charset=utf-8').send(courierLayout(frame, page))
}
