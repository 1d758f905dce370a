import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { issueApiKey, type CreatedApiKey } from '../../../shared/accounts/api-keys.js'
import { revokeKeyAs } from '../../../shared/accounts/operator-actions.js'
import { ORDER_EVENT_TYPES } from '../../../shared/courier.js'
import { API_KEY_SCOPES, isApiKeyScope, listApiKeys } from '../../../shared/db/api-keys.js'
import { deleteEndpoint, findEndpointById, listAttempts, listEndpoints, type WebhookEndpoint } from '../../../shared/db/webhooks.js'
import { isEventId, isUuid, isWebhookEndpointId } from '../../../shared/ids.js'
import { toMinor } from '../../../shared/money.js'
import { createEndpoint, rotateSecret } from '../../../shared/webhooks/endpoints.js'
import { createSecretBox } from '../../../shared/webhooks/secret-box.js'
import { redeliverEvent } from '../../../shared/webhooks/producer.js'
import { actorOf, businessIdOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { livemodeOf, modeQuery, readForm, several } from '../forms.js'
import { html, type Html } from '../html.js'
import { actionButton, field, form, select, type Frame } from '../pages/layout.js'
import { keyTable } from '../pages/keys.js'
import { when } from '../format.js'

const keySchema = z.object({ _csrf: z.string(), mode: z.enum(['live', 'test']), scopes: several(z.string().refine(isApiKeyScope, 'is not a scope')) })
const endpointSchema = z.object({ _csrf: z.string(), mode: z.enum(['live', 'test']), url: z.string().trim().max(2048), description: z.string().trim().max(255).optional(), event_types: several(z.enum(ORDER_EVENT_TYPES)) })
const csrfOnly = z.object({ _csrf: z.string() })

/** API keys and webhook endpoints: what a business's developers set up. */
export default async function businessIntegrationRoutes(app: FastifyInstance, { sql, reads, config, announce, webhooks }: ConsoleDeps) {
  async function keysPage(request: FastifyRequest, reply: FastifyReply, status: number, created: CreatedApiKey | null, error: string | null) {
    const frame = frameOf(request, reply)
    const keys = await listApiKeys(sql, businessIdOf(request))
    const shown = created
      ? html`<div role="status"><p>Your new ${created.livemode ? 'live' : 'test'} key. Copy it now: it is not shown again and is not stored in readable form.</p><p class="secret" id="new-api-key">${created.apiKey}</p></div>`
      : html``
    const body = html`${shown}${keyTable(keys, (key) => actionButton(frame, `/console/keys/${key.keyId}/revoke`, `Revoke ${key.displayPrefix}`))}
<h2>Create a key</h2>${form(frame, '/console/keys', html`${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<fieldset><legend>Scopes</legend>${API_KEY_SCOPES.map((scope) => html`<label><input type="checkbox" name="scopes" value="${scope}" checked> ${scope}</label> `)}</fieldset>
${select({ name: 'mode', label: 'Mode', options: [['live', 'Live'], ['test', 'Test (sandbox)']] })}<button type="submit">Create key</button>`, { label: 'Create an API key' })}`
    return sendPage(reply, status, frame, { title: 'API keys', path: '/console/keys', body })
  }

  app.get('/console/keys', (request, reply) => keysPage(request, reply, 200, null, null))

  // The new key is answered in this page, never in a redirect or the session: it is shown once.
  app.post('/console/keys', async (request, reply) => {
    const input = readForm(keySchema, request.body)
    const scopes = input.scopes.filter(isApiKeyScope)
    if (scopes.length === 0) return keysPage(request, reply, 400, null, 'Choose at least one scope.')
    const created = await issueApiKey(sql, actorOf(request), { businessId: businessIdOf(request), scopes, livemode: input.mode === 'live' }, toMinor(config.SANDBOX_WALLET_START))
    if (!created) return reply.callNotFound()
    await announce({ kind: 'api-key', keyHash: created.keyHash })
    return keysPage(request, reply, 201, created, null)
  })

  app.post<{ Params: { id: string } }>('/console/keys/:id/revoke', async (request, reply) => {
    readForm(csrfOnly, request.body)
    const revoked = isUuid(request.params.id) ? await revokeKeyAs(sql, actorOf(request), request.params.id, businessIdOf(request)) : null
    if (!revoked) return reply.callNotFound()
    await announce({ kind: 'api-key', keyHash: revoked.keyHash })
    return redirectWith(request, reply, '/console/keys', { kind: 'ok', text: `Key ${revoked.displayPrefix}… is revoked; the API refuses it from now on.` })
  })

  const rules = { allowHttp: config.WEBHOOK_ALLOW_HTTP, allowPrivate: config.WEBHOOK_ALLOW_PRIVATE }
  const secrets = createSecretBox(config.WEBHOOK_SECRET_KEYS)

  async function endpointsPage(request: FastifyRequest, reply: FastifyReply, livemode: boolean, status: number, extra: { created?: WebhookEndpoint; error?: string; url?: string }) {
    const frame = frameOf(request, reply, livemode)
    const endpoints = await listEndpoints(sql, { businessId: businessIdOf(request), livemode })
    const body = html`${extra.created ? secretShown(extra.created) : ''}
${endpoints.length === 0 ? html`<p>No endpoints yet.</p>` : html`<table><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead><tbody>
${endpoints.map((endpoint) => html`<tr><td><a href="/console/webhooks/${endpoint.id}">${endpoint.url}</a></td><td>${endpoint.eventTypes?.join(', ') ?? 'all'}</td><td>${endpoint.status}${endpoint.disabledReason ? html` (${endpoint.disabledReason})` : ''}</td><td>${when(endpoint.createdAt)}</td></tr>`)}</tbody></table>`}
<h2>Add an endpoint</h2>${endpointForm(frame, livemode, extra)}`
    return sendPage(reply, status, frame, { title: 'Webhooks', path: '/console/webhooks', body })
  }

  app.get('/console/webhooks', (request, reply) => endpointsPage(request, reply, livemodeOf(readForm(z.object({ mode: z.string().max(8).optional() }), request.query)), 200, {}))

  app.post('/console/webhooks', async (request, reply) => {
    const input = readForm(endpointSchema, request.body)
    const livemode = input.mode === 'live'
    const creation = await createEndpoint(sql, { businessId: businessIdOf(request), livemode }, {
      url: input.url, description: input.description || undefined, event_types: input.event_types.length > 0 ? input.event_types : undefined,
    }, rules, secrets)
    if (creation.kind !== 'created') return endpointsPage(request, reply, livemode, 400, { error: creation.message, url: input.url })
    return endpointsPage(request, reply, livemode, 201, { created: creation.endpoint })
  })

  app.get<{ Params: { id: string } }>('/console/webhooks/:id', async (request, reply) => {
    const endpoint = await ownEndpoint(request.params.id, businessIdOf(request))
    if (!endpoint) return reply.callNotFound()
    const frame = frameOf(request, reply, endpoint.livemode)
    const attempts = await listAttempts(reads, endpoint.id, { beforeId: null, limit: 50 })
    const body = html`<p>${endpoint.url} — ${endpoint.status}${endpoint.description ? html`, ${endpoint.description}` : ''}</p>
${actionButton(frame, `/console/webhooks/${endpoint.id}/rotate`, 'Rotate the signing secret')}
${actionButton(frame, `/console/webhooks/${endpoint.id}/delete`, 'Delete this endpoint')}
<h2>Delivery log</h2>${attempts.length === 0 ? html`<p>No deliveries yet.</p>` : html`<table><thead><tr><th scope="col">Event</th><th scope="col">Type</th><th scope="col">Attempt</th><th scope="col">Result</th><th scope="col">At</th><th scope="col">Redeliver</th></tr></thead><tbody>
${attempts.map((attempt) => html`<tr><td>${attempt.eventId}</td><td>${attempt.eventType}</td><td>${attempt.attempt}</td><td>${attempt.status}${attempt.responseStatus ? html` (HTTP ${attempt.responseStatus})` : ''}${attempt.error ? html`: ${attempt.error}` : ''}</td>
<td>${when(attempt.at)}</td><td>${actionButton(frame, `/console/events/${attempt.eventId}/redeliver`, `Redeliver ${attempt.eventId}`, { endpoint: endpoint.id })}</td></tr>`)}</tbody></table>`}
<p><a href="/console/webhooks${modeQuery(endpoint.livemode)}">All endpoints</a></p>`
    return sendPage(reply, 200, frame, { title: 'Webhook endpoint', path: '/console/webhooks', body })
  })

  app.post<{ Params: { id: string } }>('/console/webhooks/:id/rotate', async (request, reply) => {
    readForm(csrfOnly, request.body)
    const endpoint = await ownEndpoint(request.params.id, businessIdOf(request))
    const rotated = endpoint ? await rotateSecret(sql, { businessId: endpoint.businessId, livemode: endpoint.livemode }, endpoint.id, new Date(), secrets) : null
    if (!rotated) return reply.callNotFound()
    return sendPage(reply, 200, frameOf(request, reply, rotated.livemode), { title: 'Webhook endpoint', path: '/console/webhooks', body: html`${secretShown(rotated)}<p>The old secret keeps signing alongside it for 24 hours.</p><p><a href="/console/webhooks/${rotated.id}">Back to the endpoint</a></p>` })
  })

  app.post<{ Params: { id: string } }>('/console/webhooks/:id/delete', async (request, reply) => {
    readForm(csrfOnly, request.body)
    const endpoint = await ownEndpoint(request.params.id, businessIdOf(request))
    if (!endpoint || !(await deleteEndpoint(sql, endpoint.id, { businessId: endpoint.businessId, livemode: endpoint.livemode }))) return reply.callNotFound()
    return redirectWith(request, reply, `/console/webhooks${modeQuery(endpoint.livemode)}`, { kind: 'ok', text: `Endpoint ${endpoint.url} is deleted.` })
  })

  app.post<{ Params: { id: string } }>('/console/events/:id/redeliver', async (request, reply) => {
    const input = readForm(csrfOnly.extend({ endpoint: z.string().max(64) }), request.body)
    const endpoint = await ownEndpoint(input.endpoint, businessIdOf(request))
    if (!endpoint || !isEventId(request.params.id)) return reply.callNotFound()
    // From one endpoint's delivery log: to that endpoint only (the API's redeliver sends to every one).
    const redelivery = await redeliverEvent(sql, webhooks, { businessId: endpoint.businessId, livemode: endpoint.livemode }, request.params.id, request.log, endpoint.id)
    if (redelivery.kind === 'not_found') return reply.callNotFound()
    return redirectWith(request, reply, `/console/webhooks/${endpoint.id}`, { kind: 'ok', text: `Event ${request.params.id} is queued again for ${redelivery.endpointIds.length} endpoint(s).` })
  })

  async function ownEndpoint(id: string, businessId: string): Promise<WebhookEndpoint | null> {
    const endpoint = isWebhookEndpointId(id) ? await findEndpointById(sql, id) : null
    return endpoint?.businessId === businessId ? endpoint : null
  }
}

function secretShown(endpoint: WebhookEndpoint): Html {
  return html`<div role="status"><p>The signing secret of ${endpoint.url}. Copy it now: it is not shown again.</p><p class="secret" id="webhook-secret">${endpoint.secret}</p></div>`
}

function endpointForm(frame: Frame, livemode: boolean, extra: { error?: string; url?: string }): Html {
  return form(frame, '/console/webhooks', html`<input type="hidden" name="mode" value="${livemode ? 'live' : 'test'}">
${field({ name: 'url', label: 'URL', type: 'url', value: extra.url, error: extra.error ?? null, required: true })}
${field({ name: 'description', label: 'Description (optional)' })}
<fieldset><legend>Events (none ticked: all of them)</legend>${ORDER_EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="event_types" value="${type}"> ${type}</label> `)}</fieldset>
<button type="submit">Add endpoint</button>`, { label: 'Add a webhook endpoint' })
}
