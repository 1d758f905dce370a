import type { Queue } from 'bullmq'
import type { FastifyInstance } from 'fastify'
import { ORDER_EVENT_TYPES } from '../../../shared/courier.js'
import { findEvent, listEvents } from '../../../shared/db/events.js'
import type { WebhookJob } from '../../../shared/webhooks/queue.js'
import { redeliverEvent } from '../../../shared/webhooks/producer.js'
import type { Sql } from '../../../shared/db/sql.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isEventId } from '../../../shared/ids.js'
import { toEventResource } from '../../../shared/orders/resource.js'
import { enumListParam, integerParam, limitParam, readQuery } from '../query.js'

interface EventRouteOptions {
  sql: Sql
  /** The backfill's pool: a replica when one is configured (it may lag the primary by its replay lag). */
  reads: Sql
  webhooks: Queue<WebhookJob>
}

/**
 * The outbox, read in sequence order: a receiver that was down asks for everything after the
 * last sequence it saw, and, the numbers having no gaps, knows when it has it all.
 */
export default async function eventRoutes(app: FastifyInstance, { sql, reads, webhooks }: EventRouteOptions) {
  app.get('/business/events', async (request) => {
    const query = readQuery(request.query, ['after', 'limit', 'type'])
    const after = integerParam('after', query.after, { min: 0, max: Number.MAX_SAFE_INTEGER, fallback: 0 })
    const types = enumListParam('type', query.type, ORDER_EVENT_TYPES)
    const limit = limitParam(query.limit)
    const rows = await listEvents(reads, request.caller, { after, types, limit: limit + 1 })
    return { data: rows.slice(0, limit).map(toEventResource), has_more: rows.length > limit }
  })

  app.get<{ Params: { event_id: string } }>('/business/events/:event_id', async (request) => {
    const { event_id: eventId } = request.params
    const event = isEventId(eventId) ? await findEvent(sql, eventId, request.caller) : null
    if (!event) throw eventNotFound(eventId)
    return toEventResource(event)
  })

  // One more delivery to every enabled endpoint that takes the event's type (docs/contracts.md section 7).
  app.post<{ Params: { event_id: string } }>('/business/events/:event_id/redeliver', async (request, reply) => {
    const { event_id: eventId } = request.params
    const redelivery = isEventId(eventId) ? await redeliverEvent(sql, webhooks, request.caller, eventId, request.log) : { kind: 'not_found' as const }
    if (redelivery.kind === 'not_found') throw eventNotFound(eventId)
    return reply.code(202).send({ event_id: eventId, endpoint_ids: redelivery.endpointIds })
  })
}

function eventNotFound(eventId: string): ApiError {
  return new ApiError(404, `Event ${eventId} was not found`)
}
