import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { MIN_PASSWORD_LENGTH } from '../../../shared/console/passwords.js'
import { endSessionsOf, logIn, passwordLinkUser, setPassword } from '../../../shared/console/users.js'
import type { Sql } from '../../../shared/db/sql.js'
import { CSRF_COOKIE } from '../cookies.js'
import { frameOf, sendPage } from '../reply.js'
import { readForm } from '../forms.js'
import { html } from '../html.js'
import { field, form, type Frame } from '../pages/layout.js'

const loginSchema = z.object({ email: z.string().max(254).default(''), password: z.string().max(1024).default(''), next: z.string().optional() })
const setPasswordSchema = z.object({ token: z.string().max(200).default(''), password: z.string().max(2048).default(''), confirm: z.string().max(2048).default('') })

export const LOGIN_REFUSED = 'The email or password is wrong, or the account is locked for 15 minutes after 5 failed logins.'

/**
 * Only a path inside the console, in the printable ASCII a URL is sent in: a login link must not
 * send anyone elsewhere, and a character a header cannot carry (a line break, a raw `中`) made the
 * redirect throw once the session was saved, which took the process down.
 */
function safeNext(next: string | undefined): string {
  return next && /^\/console(?:[/?][\x21-\x7e]*)?$/.test(next) && !next.startsWith('//') ? next : '/console'
}

function loginForm(frame: Frame, values: { email?: string; next?: string; error?: string }) {
  return html`${values.error ? html`<p class="error" role="alert" id="login-error">${values.error}</p>` : ''}
${form(frame, '/console/login', html`<input type="hidden" name="next" value="${values.next ?? ''}">
${field({ name: 'email', label: 'Email', type: 'email', value: values.email, required: true, attrs: html` autocomplete="username"` })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, attrs: html` autocomplete="current-password"` })}
<button type="submit">Log in</button>`)}`
}

/** Logging in and out, and setting a password from a one-time link (DESIGN 12). */
export default async function authRoutes(app: FastifyInstance, { sql, loginLimit }: { sql: Sql; loginLimit: number }) {
  // Each attempt costs a scrypt hash: a flood from one address is turned away before it.
  const limited = loginLimit > 0 ? { config: { rateLimit: { max: loginLimit, timeWindow: 60_000 } } } : {}

  app.get<{ Querystring: { next?: string; logged_out?: string; password_set?: string } }>('/console/login', async (request, reply) => {
    if (request.user) return reply.code(303).redirect('/console')
    const frame = frameOf(request, reply)
    if (request.query.logged_out !== undefined) frame.flash = { kind: 'ok', text: 'You are logged out.' }
    if (request.query.password_set !== undefined) frame.flash = { kind: 'ok', text: 'Your password is set. Log in with it.' }
    return sendPage(reply, 200, frame, { title: 'Log in', path: '/console/login', body: loginForm(frame, { next: typeof request.query.next === 'string' ? request.query.next : undefined }) })
  })

  app.post('/console/login', limited, async (request, reply) => {
    const input = readForm(loginSchema, request.body)
    const outcome = await logIn(sql, input.email, input.password)
    if (outcome.kind === 'ok') {
      // A new session id and a new CSRF secret at login: neither planted before it is worth
      // anything after.
      await request.session.regenerate()
      request.session.userId = outcome.user.id
      reply.clearCookie(CSRF_COOKIE, { path: '/console' })
      return reply.code(303).redirect(safeNext(input.next))
    }
    // One answer for a wrong password, an unknown e-mail, a locked or a disabled account.
    const frame = frameOf(request, reply)
    return sendPage(reply, 401, frame, { title: 'Log in', path: '/console/login', body: loginForm(frame, { email: input.email, next: input.next, error: LOGIN_REFUSED }) })
  })

  app.post('/console/logout', async (request, reply) => {
    await request.session.destroy()
    return reply.code(303).redirect('/console/login?logged_out')
  })

  // Ends every session of the user: a lost laptop, a shared computer left logged in.
  app.post('/console/logout/everywhere', async (request, reply) => {
    const userId = request.session.userId
    if (userId) await endSessionsOf(sql, userId)
    await request.session.destroy()
    return reply.code(303).redirect('/console/login?logged_out')
  })

  app.get<{ Querystring: { token?: string } }>('/console/set-password', async (request, reply) => {
    // Given twice, the query's token is a list: no link.
    const token = typeof request.query.token === 'string' ? request.query.token : ''
    const user = token.length <= 200 ? await passwordLinkUser(sql, token) : null
    const frame = frameOf(request, reply)
    if (!user) return sendPage(reply, 404, frame, { title: 'Set your password', path: '/console/set-password', body: html`<p role="alert">This link was used already or has expired; ask an operator for a new one.</p>` })
    return sendPage(reply, 200, frame, { title: 'Set your password', path: '/console/set-password', body: passwordForm(frame, token, user.email, {}) })
  })

  app.post('/console/set-password', limited, async (request, reply) => {
    const input = readForm(setPasswordSchema, request.body)
    const outcome = await setPassword(sql, input.token, input.password, input.confirm)
    if (outcome.kind === 'set') {
      await request.session.regenerate()
      return reply.code(303).redirect('/console/login?password_set')
    }
    const frame = frameOf(request, reply)
    // A password refused at its field leaves the link unused: the form comes back for its user.
    const user = outcome.field === 'token' ? null : await passwordLinkUser(sql, input.token)
    const body = !user
      ? html`<p role="alert">${outcome.message}</p>`
      : passwordForm(frame, input.token, user.email, { [outcome.field]: outcome.message })
    return sendPage(reply, 400, frame, { title: 'Set your password', path: '/console/set-password', body })
  })
}

function passwordForm(frame: Frame, token: string, email: string, errors: { password?: string; confirm?: string }) {
  return html`<p>Choose a password for <strong>${email}</strong>: at least ${MIN_PASSWORD_LENGTH} characters.</p>
${form(frame, '/console/set-password', html`<input type="hidden" name="token" value="${token}">
<input type="hidden" name="username" value="${email}" autocomplete="username">
${field({ name: 'password', label: 'New password', type: 'password', required: true, error: errors.password, attrs: html` autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}"` })}
${field({ name: 'confirm', label: 'Repeat the password', type: 'password', required: true, error: errors.confirm, attrs: html` autocomplete="new-password"` })}
<button type="submit">Set password</button>`)}`
}
