import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ConsoleUser } from '../../shared/db/console-users.js'
import type { Order } from '../../shared/db/orders.js'
import type { PhotoStore } from '../../shared/storage/photos.js'
import { COURIER_COOKIE, COURIER_PATH } from './cookies.js'
import { layout, type Frame } from './pages/layout.js'
import type { Flash } from './session-store.js'

// How every console route answers: a page in its frame, or a redirect carrying a message.

declare module 'fastify' {
  interface FastifyRequest {
    user: ConsoleUser | null
  }
}

/** The frame of the page being answered: who, a CSRF token for its forms, and the message left by the last action. */
export function frameOf(request: FastifyRequest, reply: FastifyReply, livemode?: boolean): Frame {
  const flash = request.session.flash ?? null
  if (flash) request.session.flash = undefined
  return { user: request.user, csrf: csrfTokenFor(request, reply), flash, livemode }
}

/**
 * A token for the page's forms, its secret in the CSRF cookie on `cookiePath` (/console, or the
 * courier app's /courier, each apart). Only under that path: a page answered elsewhere (a
 * browser's /favicon.ico) gets no cookie with its request and would otherwise replace the secret
 * the open form's token was made from. Empty when no token can be made.
 */
export function csrfTokenFor(request: FastifyRequest, reply: FastifyReply, cookiePath = '/console'): string {
  if (!request.url.startsWith(cookiePath)) return ''
  try {
    return reply.generateCsrf({ path: cookiePath, userInfo: csrfUserOf(request) })
  } catch {
    return ''
  }
}

/** Whom a form before login is made for. Never empty (the token library refuses that), and never a user id (a UUID). */
const NOBODY = 'nobody'

/**
 * Whom a form token is made for, and checked against: the console user logged in, the courier
 * app's session, or nobody (before login). A token and secret someone planted from another site
 * of the domain (cookies of `Domain=` a parent) are theirs, made for them or for nobody, and
 * refused on a logged-in user's or courier's form.
 */
export function csrfUserOf(request: FastifyRequest): string {
  const path = request.url.split('?', 1)[0] ?? ''
  if (path === COURIER_PATH || path.startsWith(`${COURIER_PATH}/`)) {
    // The courier app's own session, read from its signed cookie here: the check runs before the
    // courier app's routes load the session itself.
    const cookie = request.cookies[COURIER_COOKIE]
    const session = cookie ? request.unsignCookie(cookie) : null
    return session?.valid && session.value ? `courier ${session.value}` : NOBODY
  }
  return request.session.userId ?? NOBODY
}

/** After a form's action: Post/Redirect/Get, with the outcome shown once on the next page. */
export function redirectWith(request: FastifyRequest, reply: FastifyReply, to: string, flash: Flash) {
  request.session.flash = flash
  return reply.code(303).redirect(to)
}

export function sendPage(reply: FastifyReply, statusCode: number, frame: Frame, page: Parameters<typeof layout>[1]) {
  return reply.code(statusCode).type('text/html; charset=utf-8').send(layout(frame, page).text)
}

/** The business whose pages these are; the role guard has made sure there is one. */
export function businessIdOf(request: FastifyRequest): string {
  const businessId = request.user?.businessId
  if (!businessId) throw new Error('a business page was reached without a business user')
  return businessId
}

/** Who the audit trail names for this request's change: the logged-in user's e-mail. */
export function actorOf(request: FastifyRequest): string {
  if (!request.user) throw new Error('a change was reached without a logged-in user')
  return request.user.email
}


/** An order's delivery photo, read from the photo store for a viewer allowed to see the order; 404 when it has none. */
export async function sendProofPhoto(reply: FastifyReply, photos: PhotoStore, order: Order) {
  const photo = order.photoKey ? await photos.get(order.photoKey) : null
  if (!photo) return reply.callNotFound()
  return reply.type(photo.contentType).header('content-disposition', `inline; filename="${order.id}-proof.${photo.contentType === 'image/png' ? 'png' : 'jpg'}"`).send(photo.bytes)
}
