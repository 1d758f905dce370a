import { z } from 'zod'
import { ORDER_STATUSES } from '../../shared/courier.js'
import type { OrderFilter } from '../../shared/db/orders.js'
import { isOrderId, isUuid } from '../../shared/ids.js'
import { isStorableTime } from '../../shared/schemas/fields.js'

export const PAGE_SIZE = 25

const day = z.union([z.literal(''), z.iso.date({ error: 'must be a date (YYYY-MM-DD)' }).refine((value) => isStorableTime(Date.parse(value)), 'must be a date from 0001-01-01 to 9999-12-31')]).optional()

/** The orders list's query string: the API's filters, a keyset cursor, the mode and (operators) a business. */
export const orderListQuerySchema = z.object({
  mode: z.string().max(8).optional(),
  status: z.union([z.literal(''), z.enum(ORDER_STATUSES)]).optional(),
  placement_id: z.union([z.literal(''), z.string().refine(isUuid, 'must be a placement id')]).optional(),
  created_gte: day,
  created_lt: day,
  business: z.union([z.literal(''), z.string().refine(isUuid, 'must be a business id')]).optional(),
  after: z.string().max(80).regex(/^[0-9T:.\-Z]+_ORD-/, 'is not a page cursor').refine((value) => isOrderId(value.split('_')[1] ?? '') && isStorableTime(Date.parse(value.split('_')[0] ?? '')), 'is not a page cursor').optional(),
})

export type OrderListQuery = z.infer<typeof orderListQuerySchema>

/** The repository's filter for one page (one extra row tells whether there is a next page). */
export function orderFilterOf(query: OrderListQuery): OrderFilter {
  const [afterAt, afterId] = query.after ? query.after.split('_') : []
  return {
    statuses: query.status ? [query.status] : null,
    placementId: query.placement_id || null,
    createdGte: query.created_gte ? new Date(`${query.created_gte}T00:00:00Z`) : null,
    createdLt: query.created_lt ? new Date(`${query.created_lt}T00:00:00Z`) : null,
    after: afterId ? { createdAt: new Date(afterAt), id: afterId } : null,
    limit: PAGE_SIZE + 1,
  }
}

/** The query string of the current filters, without the cursor: the base of the next page's link. */
export function filterParams(query: OrderListQuery): URLSearchParams {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) if (key !== 'after' && typeof value === 'string' && value !== '') params.set(key, value)
  return params
}
