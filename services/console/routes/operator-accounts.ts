import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { creditWalletAs, describeDifferences, enableRateCardAs, openBusiness, revokeKeyAs } from '../../../shared/accounts/operator-actions.js'
import { createConsoleUser, disableConsoleUserAs } from '../../../shared/console/users.js'
import { listAudit } from '../../../shared/db/audit.js'
import { listApiKeys } from '../../../shared/db/api-keys.js'
import { findBusiness, searchBusinesses, type Business } from '../../../shared/db/businesses.js'
import { listConsoleUsers } from '../../../shared/db/console-users.js'
import { listRateCards } from '../../../shared/db/rate-cards.js'
import { findWalletView, listLedger, WALLET_MAX_KOBO } from '../../../shared/db/wallets.js'
import { isUuid } from '../../../shared/ids.js'
import { businessProfileSchema } from '../../../shared/schemas/business.js'
import { MAX_AMOUNT_MAJOR, readMajorAmount } from '../../../shared/money.js'
import { actorOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { money, when } from '../format.js'
import { BLANK_FORM, checkForm, isRefused, readForm, refusedAt, typed, type FormState } from '../forms.js'
import { html } from '../html.js'
import { auditTable } from '../pages/audit.js'
import { keyTable } from '../pages/keys.js'
import { actionButton, field, form, select } from '../pages/layout.js'
import { ledgerTable } from '../pages/ledger.js'

// The API's rules for a business's phone, address and state (they are its shipments' defaults).
const businessSchema = businessProfileSchema.extend({ _csrf: z.string() })
const BUSINESS_NAMES = { name: 'Name', phone: 'Phone', address: 'Address', state: 'State' }

// Read to kobo by the rule of every amount an operator types (the CLI's `--amount` too).
const amountInKobo = z.string().max(32).transform((text, ctx) => {
  const amount = readMajorAmount(text)
  if (amount.kind === 'ok') return amount.kobo
  ctx.addIssue({ code: 'custom', message: amount.problem === 'too_large' ? `must be at most ${MAX_AMOUNT_MAJOR}` : `must be a positive number with at most 2 decimals, got '${text}'` })
  return z.NEVER
})
// The reference is required here, unlike the CLI's: it is what makes a form sent twice (a double
// click, a browser resending a slow post) credit once, and a bank transfer always has one.
const creditSchema = z.object({ _csrf: z.string(), amount: amountInKobo, reference: z.string().trim().min(1).max(255), mode: z.enum(['live', 'test']) })
const CREDIT_NAMES = { amount: 'Amount', reference: 'Reference', mode: 'Wallet' }
const enableSchema = z.object({ _csrf: z.string(), rate_card: z.string().refine(isUuid, 'is not a rate card') })
const userSchema = z.object({ _csrf: z.string(), email: z.string().trim().max(254) })
const csrfOnly = z.object({ _csrf: z.string() })

/** Businesses, one business's wallet, keys, card and users, and the audit trail: the operator's accounts work. */
export default async function operatorAccountRoutes(app: FastifyInstance, { sql, reads, config, announce }: ConsoleDeps) {
  async function businessesPage(request: FastifyRequest, reply: FastifyReply, status: number, q: string, created: FormState) {
    const frame = frameOf(request, reply)
    if (isRefused(created)) frame.flash = { kind: 'error', text: 'The business was not created: correct the marked fields.' }
    // A list: the replica's (DESIGN 16). A business just created is shown on its own page, read from the primary.
    const businesses = await searchBusinesses(reads, q, 100)
    const body = html`<form method="get" action="/console/ops/businesses" role="search">${field({ name: 'q', label: 'Search by name or id', value: q })}<button type="submit">Search</button></form>
<table><thead><tr><th scope="col">Business</th><th scope="col">State</th><th scope="col">Created</th></tr></thead><tbody>
${businesses.map((business) => html`<tr><td><a href="/console/ops/businesses/${business.id}">${business.name}</a>${business.isDemo ? ' (demo)' : ''}</td><td>${business.state}</td><td>${when(business.createdAt)}</td></tr>`)}</tbody></table>
<h2>Create a business</h2>${form(frame, '/console/ops/businesses', html`${field({ ...typed(created, 'name'), label: BUSINESS_NAMES.name, required: true })}
${field({ ...typed(created, 'phone'), label: `${BUSINESS_NAMES.phone} (e.g. 0803 123 4567 or +234 803 123 4567)`, type: 'tel', required: true })}
${field({ ...typed(created, 'address'), label: `${BUSINESS_NAMES.address} (where couriers collect its parcels)`, required: true })}
${field({ ...typed(created, 'state'), label: `${BUSINESS_NAMES.state} (e.g. Lagos or FCT)`, required: true })}<button type="submit">Create business</button>`, { label: 'Create a business' })}`
    return sendPage(reply, status, frame, { title: 'Businesses', path: '/console/ops/businesses', body })
  }

  app.get('/console/ops/businesses', async (request, reply) => {
    const { q = '' } = readForm(z.object({ q: z.string().trim().max(100).optional() }), request.query)
    return businessesPage(request, reply, 200, q, BLANK_FORM)
  })

  app.post('/console/ops/businesses', async (request, reply) => {
    const checked = checkForm(businessSchema, request.body, BUSINESS_NAMES)
    if (checked.kind === 'refused') return businessesPage(request, reply, 400, '', checked.form)
    const { _csrf, ...profile } = checked.input
    const opening = await openBusiness(sql, actorOf(request), { ...profile, currency: config.CURRENCY })
    const { business } = opening
    const to = `/console/ops/businesses/${business.id}`
    if (opening.kind === 'conflict') {
      return redirectWith(request, reply, to, { kind: 'error', text: `Nothing was created: this business is named ${business.name} already, with ${describeDifferences(opening.differences)}. Give another business another name.` })
    }
    if (opening.kind === 'exists') return redirectWith(request, reply, to, { kind: 'ok', text: `Business ${business.name} exists already with these details; nothing was created.` })
    return redirectWith(request, reply, to, { kind: 'ok', text: `Business ${business.name} is created with an empty wallet.` })
  })

  async function businessPage(request: FastifyRequest, reply: FastifyReply, business: Business, status: number, credit: FormState) {
    const frame = frameOf(request, reply)
    if (isRefused(credit)) frame.flash = { kind: 'error', text: 'Nothing was credited: correct the marked field.' }
    const [live, test, keys, cards, users, ledger] = await Promise.all([
      findWalletView(sql, business.id, true), findWalletView(sql, business.id, false), listApiKeys(sql, business.id),
      listRateCards(sql), listConsoleUsers(sql, business.id), listLedger(reads, business.id, { kinds: null, beforeSeq: null, limit: 10 }, true),
    ])
    const base = `/console/ops/businesses/${business.id}`
    const enabled = cards.find((card) => card.id === business.rateCardId)
    const body = html`<p>${business.phone} · ${business.address}, ${business.state} · <code>${business.id}</code></p>
<div class="cards"><div class="card"><h2>Live wallet</h2><p class="balance" id="live-balance">${live ? money(live.balance, business.currency) : 'none'}</p></div>
<div class="card"><h2>Test wallet</h2><p class="balance">${test ? money(test.balance, business.currency) : 'not opened'}</p></div>
<div class="card"><h2>Rate card</h2><p>${enabled ? `${enabled.name} (version ${enabled.versions[0]?.version ?? 1})` : 'none: priced by distance'}</p></div></div>
<h2>Credit the wallet</h2>${form(frame, `${base}/credit`, html`${field({ ...typed(credit, 'amount'), label: `${CREDIT_NAMES.amount} (${business.currency}, e.g. 5000 or 5000.50)`, required: true, attrs: html` inputmode="decimal"` })}
${field({ ...typed(credit, 'reference'), label: `${CREDIT_NAMES.reference} (the bank transfer's id; the same reference credits once)`, required: true, attrs: html` maxlength="255"` })}
${select({ ...typed(credit, 'mode'), label: CREDIT_NAMES.mode, options: [['live', 'Live'], ['test', 'Test']] })}<button type="submit">Credit wallet</button>`, { label: 'Credit the wallet' })}
<h2>Latest live ledger entries</h2>${ledgerTable(ledger, business.currency, '/console/ops/orders/')}
<h2>API keys</h2>${keyTable(keys, (key) => actionButton(frame, `${base}/keys/${key.keyId}/revoke`, `Revoke ${key.displayPrefix}`))}
<h2>Rate card</h2>${cards.length === 0 ? html`<p>No rate cards yet: <a href="/console/ops/rate-cards">import one</a>.</p>` : form(frame, `${base}/rate-card`, html`${select({ name: 'rate_card', label: 'Card to price with', options: cards.map((card) => [card.id, card.name] as const), value: business.rateCardId ?? undefined })}<button type="submit">Enable rate card</button>`, { label: 'Enable a rate card' })}
<h2>Console users</h2><ul>${users.map((user) => html`<li>${user.email}${user.disabledAt ? ' (disabled)' : html`${user.passwordHash ? '' : ' (password not set yet)'} ${actionButton(frame, `${base}/users/${user.id}/disable`, `Disable ${user.email}`)}`}</li>`)}</ul>
${form(frame, `${base}/users`, html`${field({ name: 'email', label: 'Email of a new user for this business', type: 'email', required: true })}<button type="submit">Create user</button>`, { label: 'Create a console user' })}
<p><a href="/console/ops/audit?business=${business.id}">Audit trail of this business</a> · <a href="/console/ops/orders?business=${business.id}">Its orders</a></p>`
    return sendPage(reply, status, frame, { title: business.name, path: '/console/ops/businesses', body })
  }

  app.get<{ Params: { id: string } }>('/console/ops/businesses/:id', async (request, reply) => {
    const business = isUuid(request.params.id) ? await findBusiness(sql, request.params.id) : null
    if (!business) return reply.callNotFound()
    return businessPage(request, reply, business, 200, BLANK_FORM)
  })

  app.post<{ Params: { id: string } }>('/console/ops/businesses/:id/credit', async (request, reply) => {
    const business = isUuid(request.params.id) ? await findBusiness(sql, request.params.id) : null
    if (!business) return reply.callNotFound()
    const checked = checkForm(creditSchema, request.body, CREDIT_NAMES)
    if (checked.kind === 'refused') return businessPage(request, reply, business, 400, checked.form)
    const { input } = checked
    const wallet = await creditWalletAs(sql, actorOf(request), { businessId: business.id, amount: input.amount, reference: input.reference, livemode: input.mode === 'live' })
    if (!wallet) {
      const refusal = input.mode === 'live' ? 'This business has no wallet.' : 'This business has no test wallet yet: it opens with its first test key.'
      return businessPage(request, reply, business, 400, refusedAt(checked.values, 'mode', refusal))
    }
    if (wallet.kind === 'over_limit') {
      return businessPage(request, reply, business, 400, refusedAt(checked.values, 'amount', `Amount would take the balance (${money(wallet.balance, wallet.currency)}) past the most a wallet holds, ${money(WALLET_MAX_KOBO, wallet.currency)}.`))
    }
    const text = wallet.kind === 'credited'
      ? `Credited ${money(input.amount, wallet.currency)}; the ${input.mode} balance is now ${money(wallet.balance, wallet.currency)}.`
      : wallet.earlier.amount !== input.amount
        ? `Reference ${input.reference} already credited ${money(wallet.earlier.amount, wallet.currency)}, not ${money(input.amount, wallet.currency)}: nothing was credited; use another reference.`
        : `Reference ${input.reference} was credited before; the balance is unchanged at ${money(wallet.balance, wallet.currency)}.`
    return redirectWith(request, reply, `/console/ops/businesses/${business.id}`, { kind: wallet.kind === 'credited' ? 'ok' : 'error', text })
  })

  app.post<{ Params: { id: string; keyId: string } }>('/console/ops/businesses/:id/keys/:keyId/revoke', async (request, reply) => {
    readForm(csrfOnly, request.body)
    const revoked = isUuid(request.params.id) && isUuid(request.params.keyId) ? await revokeKeyAs(sql, actorOf(request), request.params.keyId, request.params.id) : null
    if (!revoked) return reply.callNotFound()
    await announce({ kind: 'api-key', keyHash: revoked.keyHash })
    return redirectWith(request, reply, `/console/ops/businesses/${request.params.id}`, { kind: 'ok', text: `Key ${revoked.displayPrefix}… is revoked.` })
  })

  app.post<{ Params: { id: string } }>('/console/ops/businesses/:id/rate-card', async (request, reply) => {
    const input = readForm(enableSchema, request.body)
    if (!isUuid(request.params.id)) return reply.callNotFound()
    const enabling = await enableRateCardAs(sql, actorOf(request), request.params.id, input.rate_card)
    if (enabling.kind !== 'enabled') return reply.callNotFound()
    await announce({ kind: 'business', businessId: request.params.id })
    return redirectWith(request, reply, `/console/ops/businesses/${request.params.id}`, { kind: 'ok', text: 'The rate card is enabled; quotes use it from now on.' })
  })

  // The link is shown here once, for the operator to pass on; only its hash is stored.
  app.post<{ Params: { id: string } }>('/console/ops/businesses/:id/users', async (request, reply) => {
    const input = readForm(userSchema, request.body)
    if (!isUuid(request.params.id)) return reply.callNotFound()
    const created = await createConsoleUser(sql, actorOf(request), { email: input.email, role: 'business', businessId: request.params.id }, config.CONSOLE_PUBLIC_URL)
    if (created.kind === 'invalid') return redirectWith(request, reply, `/console/ops/businesses/${request.params.id}`, { kind: 'error', text: created.message })
    const body = html`<p role="status">Send this one-time link to ${created.user.email}; it sets their password and expires ${when(created.expiresAt)}.</p>
<p class="secret" id="set-password-link">${created.link}</p><p><a href="/console/ops/businesses/${request.params.id}">Back to the business</a></p>`
    return sendPage(reply, 201, frameOf(request, reply), { title: 'User created', path: '/console/ops/businesses', body })
  })

  // Every session of the user ends now; their logins, links and sessions stop working.
  app.post<{ Params: { id: string; userId: string } }>('/console/ops/businesses/:id/users/:userId/disable', async (request, reply) => {
    if (!isUuid(request.params.id) || !isUuid(request.params.userId)) return reply.callNotFound()
    const disabled = await disableConsoleUserAs(sql, actorOf(request), request.params.userId, request.params.id)
    if (disabled.kind === 'no_user') return reply.callNotFound()
    return redirectWith(request, reply, `/console/ops/businesses/${request.params.id}`, { kind: 'ok', text: `${disabled.user.email} is disabled; ${disabled.sessionsEnded} session(s) ended.` })
  })

  app.get('/console/ops/audit', async (request, reply) => {
    const query = readForm(z.object({ business: z.string().refine(isUuid, 'is not a business id').optional(), before: z.string().regex(/^\d{1,18}$/).optional() }), request.query)
    const entries = await listAudit(reads, { businessId: query.business ?? null, beforeId: query.before ? Number(query.before) : null, limit: 51 })
    const shown = entries.slice(0, 50)
    const body = html`${auditTable(shown, config.CURRENCY)}
${entries.length > 50 ? html`<p><a rel="next" href="/console/ops/audit?before=${shown[49].id}${query.business ? `&business=${query.business}` : ''}">Older entries</a></p>` : ''}`
    return sendPage(reply, 200, frameOf(request, reply), { title: 'Audit trail', path: '/console/ops/audit', body })
  })
}
