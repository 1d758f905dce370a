import { createHash, randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createPendingPlacement, findPlacement, findPlacementByKey, releaseKey } from '../../../shared/db/placements.js'
import { isConnectionError, isTimeoutError, type Sql } from '../../../shared/db/sql.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isUuid } from '../../../shared/ids.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { livePlacementRequestSchema, placementRequestSchema } from '../../../shared/schemas/shipment.js'
import { sendPlacement } from '../placement-answer.js'
import type { PlacementQueue } from '../placement-queue.js'

const KEY_MAX = 255

interface PlacementRouteOptions {
  sql: Sql
  placements: PlacementQueue
  idempotencyTtlHours: number
}

/**
 * A step of recording the placement: the pending row's insert, or the look at (and release of)
 * an earlier use of its Idempotency-Key. Postgres out of reach or too slow is a 503 that carries
 * the placement's id like every 503 of a placement (DESIGN 7): if the insert did commit before
 * the answer was lost, the orphan settler closes it and GET /placements/{id} says so; if not,
 * that read is a 404, and either way nothing was charged.
 */
async function recording<T>(placementId: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (err) {
    if (!isConnectionError(err) && !isTimeoutError(err)) throw err
    throw new ApiError(503, `Placement could not be recorded; nothing was charged; retry with the same Idempotency-Key or read GET /v2/business/placements/${placementId}`, { placement_id: placementId })
  }
}

export default async function placementRoutes(app: FastifyInstance, { sql, placements, idempotencyTtlHours }: PlacementRouteOptions) {
  app.post('/business/order', async (request, reply) => {
    const idempotencyKey = readIdempotencyKey(request)
    // A live key's `sandbox_scenario` is ignored like an unknown field: not checked, not stored, not part of the request's hash.
    const shipments = parseBody(request.caller.livemode ? livePlacementRequestSchema : placementRequestSchema, request.body)
    const businessId = request.caller.businessId
    // The parsed body is the request: unknown fields were dropped, so they cannot make a replay differ.
    const shipmentsJson = JSON.stringify(shipments)
    const requestHash = createHash('sha256').update(shipmentsJson).digest('hex')
    const placementId = randomUUID()

    for (let attempt = 0; attempt < 3; attempt++) {
      // The shipments stay on the row; the job carries ids only.
      if (await recording(placementId, () => createPendingPlacement(sql, { id: placementId, businessId, livemode: request.caller.livemode, idempotencyKey, requestHash, shipmentsJson }))) {
        const outcome = await placements.submit({ placement_id: placementId, business_id: businessId })
        return sendPlacement(request, reply, placementId, outcome)
      }
      // Only a held Idempotency-Key makes the insert yield nothing.
      const earlier = await recording(placementId, () => findPlacementByKey(sql, request.caller, idempotencyKey!))
      if (!earlier) continue
      if (Date.now() - earlier.createdAt.getTime() > idempotencyTtlHours * 3600_000 && earlier.status !== 'pending') {
        await recording(placementId, () => releaseKey(sql, earlier.id))
        continue
      }
      if (earlier.requestHash !== requestHash) throw new ApiError(422, 'Idempotency-Key was already used with a different request body', { placement_id: earlier.id })
      if (!earlier.outcome) throw new ApiError(409, 'A request with this Idempotency-Key is still in progress', { placement_id: earlier.id })
      reply.header('idempotent-replayed', 'true')
      return sendPlacement(request, reply, earlier.id, earlier.outcome)
    }
    throw new ApiError(409, 'A request with this Idempotency-Key is still in progress')
  })

  app.get<{ Params: { placement_id: string } }>('/business/placements/:placement_id', async (request, reply) => {
    const { placement_id: id } = request.params
    const placement = isUuid(id) ? await findPlacement(sql, request.caller, id) : null
    if (!placement) throw new ApiError(404, `Placement ${id} was not found`)
    if (!placement.outcome) return reply.code(202).send({ status: 'pending', placement_id: placement.id })
    return sendPlacement(request, reply, placement.id, placement.outcome)
  })
}

function readIdempotencyKey(request: FastifyRequest): string | null {
  const header = request.headers['idempotency-key']
  if (header === undefined) return null
  const key = Array.isArray(header) ? header[0] : header
  if (key.length === 0) throw new ApiError(400, 'Idempotency-Key must not be empty')
  if (key.length > KEY_MAX) throw new ApiError(400, `Idempotency-Key must be shorter than or equal to ${KEY_MAX} characters`)
  return key
}
