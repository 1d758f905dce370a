import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ORDER_STATUSES, type CourierFix } from '../../../shared/courier.js'
import { findOrder, listOrders, type Order } from '../../../shared/db/orders.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import type { Sql } from '../../../shared/db/sql.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isOrderId, isUuid } from '../../../shared/ids.js'
import { changeOrder } from '../../../shared/orders/change.js'
import { locatedBy, orderAsShown } from '../../../shared/orders/resource.js'
import { lastFixes } from '../../../shared/couriers/positions.js'
import { afterOrderChange } from '../../../shared/dispatch/after-change.js'
import type { DispatchQueue } from '../../../shared/dispatch/queue.js'
import type { RedisClient } from '../../../shared/redis.js'
import { cancelRequestSchema } from '../../../shared/schemas/order.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { isStorableTime } from '../../../shared/schemas/fields.js'
import { orderNotFound } from '../../../shared/orders/refusals.js'
import { sendOrderChange } from '../order-answer.js'
import { dateParam, decodeCursor, keysetPage, enumListParam, limitParam, readQuery } from '../query.js'

const LIST_PARAMS = ['status', 'placement_id', 'created_gte', 'created_lt', 'limit', 'cursor'] as const

// The last order of a page: its creation time (ISO, to the millisecond) and id (an order id's
// shape: a NUL in a hand-made one reached Postgres's text and was a 500).
const orderCursor = z.object({ t: z.iso.datetime().refine((t) => isStorableTime(Date.parse(t))), id: z.string().refine(isOrderId) }).strict()

interface OrderRouteOptions {
  sql: Sql
  /** The list's pool: a replica when one is configured; one order is always read on `sql`, the primary. */
  reads: Sql
  redis: RedisClient
  /** Not `prefix`: fastify would take that for the routes' URL prefix. */
  queuePrefix: string
  /** A cancel frees the courier it concerns (an offer withdrawn, an order held): dispatch looks again. */
  dispatch: DispatchQueue
}

/** The caller's orders: read, list, cancel (docs/contracts.md section 6). */
export default async function orderRoutes(app: FastifyInstance, { sql, reads, redis, queuePrefix: prefix, dispatch }: OrderRouteOptions) {
  /** Where the couriers of these orders are, one Redis round trip; without Redis, nowhere (the order still reads). */
  const couriersOnTheWay = (orders: Order[]) =>
    lastFixes(redis, prefix, orders.flatMap((order) => locatedBy(order) ?? [])).catch(() => new Map<string, CourierFix>())

  app.get('/business/orders', async (request) => {
    const query = readQuery(request.query, LIST_PARAMS)
    const statuses = enumListParam('status', query.status, ORDER_STATUSES)
    const placementId = query.placement_id ?? null
    if (placementId !== null && !isUuid(placementId)) throw new ApiError(400, 'placement_id must be a UUID')
    const createdGte = dateParam('created_gte', query.created_gte)
    const createdLt = dateParam('created_lt', query.created_lt)
    const limit = limitParam(query.limit)
    const cursor = decodeCursor(query.cursor, orderCursor)
    const after = cursor && { createdAt: new Date(cursor.t), id: cursor.id }

    // One more than the page shows: whether it exists is `has_more`.
    const [rows, rates] = await Promise.all([
      listOrders(reads, request.caller, { statuses, placementId, createdGte, createdLt, after, limit: limit + 1 }),
      getPlatformRates(sql),
    ])
    const now = new Date()
    const fixes = await couriersOnTheWay(rows)
    return keysetPage(rows, limit, (order) => orderAsShown(order, rates, now, fixes.get(locatedBy(order) ?? '') ?? null), (order) => ({ t: order.createdAt.toISOString(), id: order.id }))
  })

  app.get<{ Params: { order_id: string } }>('/business/orders/:order_id', async (request) => {
    const { order_id: orderId } = request.params
    const [order, rates] = await Promise.all([
      isOrderId(orderId) ? findOrder(sql, orderId, request.caller) : null,
      getPlatformRates(sql),
    ])
    if (!order) throw orderNotFound(orderId)
    const courierId = locatedBy(order)
    return orderAsShown(order, rates, new Date(), courierId ? (await couriersOnTheWay([order])).get(courierId) ?? null : null)
  })

  app.post<{ Params: { order_id: string } }>('/business/orders/:order_id/cancel', async (request, reply) => {
    const { order_id: orderId } = request.params
    const body = request.body === undefined ? {} : parseBody(cancelRequestSchema, request.body)
    if (!isOrderId(orderId)) throw orderNotFound(orderId)
    const outcome = await changeOrder(sql, { orderId, scope: request.caller }, { kind: 'cancel', by: 'business', reason: body.reason ?? null })
    if (outcome.kind === 'changed') await afterOrderChange({ redis, prefix, dispatch }, outcome, (err) => request.log.warn({ err }, 'courier notice lost'))
    return sendOrderChange(reply, outcome)
  })
}
