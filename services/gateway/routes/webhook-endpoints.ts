import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Sql } from '../../../shared/db/sql.js'
import { deleteEndpoint, findEndpoint, listAttempts, listEndpoints } from '../../../shared/db/webhooks.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isWebhookEndpointId } from '../../../shared/ids.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { endpointRequestSchema, rotateSecretRequestSchema } from '../../../shared/schemas/webhook.js'
import { createEndpoint, rotateSecret } from '../../../shared/webhooks/endpoints.js'
import type { SecretBox } from '../../../shared/webhooks/secret-box.js'
import { toAttemptResource, toEndpointResource } from '../../../shared/webhooks/resource.js'
import type { UrlRules } from '../../../shared/webhooks/url-rules.js'
import { decodeCursor, keysetPage, limitParam, readQuery, type CursorCodec } from '../query.js'

interface WebhookEndpointRouteOptions {
  sql: Sql
  /** The delivery log's pool: a replica when one is configured; endpoints themselves are read on `sql`, the primary. */
  reads: Sql
  rules: UrlRules
  secrets: SecretBox
}

const attemptCursor = z.object({ id: z.number().int().positive() }).strict()

function endpointNotFound(id: string): ApiError {
  return new ApiError(404, `Webhook endpoint ${id} was not found`)
}

/** Webhook endpoints and their delivery log (docs/contracts.md section 7); every route needs `webhooks:write` (its operations in the OpenAPI document say so). */
export default async function webhookEndpointRoutes(app: FastifyInstance, { sql, reads, rules, secrets }: WebhookEndpointRouteOptions) {
  // The delivery log pages by the attempt's row number, which every business's attempts share:
  // its cursor is sealed under the webhook key ring, so it says nothing of other businesses'
  // volume, and it stays readable across a key rotation (the ring opens any of its keys).
  const sealedCursors: CursorCodec = {
    encode: (json) => secrets.seal(json),
    decode: (value) => {
      try {
        return value.startsWith('v1.') ? secrets.open(value) : null
      } catch {
        return null
      }
    },
  }
  app.post('/business/webhook-endpoints', async (request, reply) => {
    const body = parseBody(endpointRequestSchema, request.body)
    const created = await createEndpoint(sql, request.caller, body, rules, secrets)
    switch (created.kind) {
      case 'url_refused':
        throw new ApiError(400, created.message)
      case 'limit_reached':
        throw new ApiError(409, created.message)
      case 'created':
        return reply.code(201).send({ ...toEndpointResource(created.endpoint), secret: created.endpoint.secret })
    }
  })

  app.get('/business/webhook-endpoints', async (request) => {
    readQuery(request.query, [])
    const endpoints = await listEndpoints(sql, request.caller)
    return { data: endpoints.map(toEndpointResource) }
  })

  app.delete<{ Params: { id: string } }>('/business/webhook-endpoints/:id', async (request, reply) => {
    const { id } = request.params
    if (!isWebhookEndpointId(id) || !(await deleteEndpoint(sql, id, request.caller))) throw endpointNotFound(id)
    return reply.code(204).send()
  })

  app.post<{ Params: { id: string } }>('/business/webhook-endpoints/:id/rotate-secret', async (request) => {
    const { id } = request.params
    const body = request.body === undefined ? {} : parseBody(rotateSecretRequestSchema, request.body)
    const rotated = isWebhookEndpointId(id) ? await rotateSecret(sql, request.caller, id, new Date(), secrets, body.expire_previous_now) : null
    if (!rotated) throw endpointNotFound(id)
    return { id: rotated.id, secret: rotated.secret, previous_secret_expires_at: rotated.previousSecretExpiresAt?.toISOString() ?? null }
  })

  app.get<{ Params: { id: string } }>('/business/webhook-endpoints/:id/deliveries', async (request) => {
    const { id } = request.params
    const query = readQuery(request.query, ['limit', 'cursor'])
    const limit = limitParam(query.limit)
    const cursor = decodeCursor(query.cursor, attemptCursor, sealedCursors)
    const endpoint = isWebhookEndpointId(id) ? await findEndpoint(sql, id, request.caller) : null
    if (!endpoint) throw endpointNotFound(id)
    const rows = await listAttempts(reads, endpoint.id, { beforeId: cursor?.id ?? null, limit: limit + 1 })
    return keysetPage(rows, limit, toAttemptResource, (attempt) => ({ id: attempt.id }), sealedCursors)
  })
}
