import { z } from 'zod'
import { ORDER_STATUSES } from '../../shared/courier.js'
import type { OrderFilter } from '../../shared/db/orders.js'
import { isOrderId, isUuid } from '../../shared/ids.js'
import { isStorableTime } from '../../shared/schemas/fields.js'
import { readEnumList, readInteger, readTime, type FilterReading } from '../../shared/schemas/list-query.js'
import { utcInputValue } from './format.js'
import { several } from './forms.js'

/** The page size when the query names none; any from 1 to 100 may be asked for, as in the API. */
export const PAGE_SIZE = 25

/**
 * A filter read by the API's own rule, with the API's words when it is refused; a field left
 * blank on the form (or absent) is no filter: `null`.
 */
function readFilter<T>(read: (value: string) => FilterReading<T>) {
  return (value: string | undefined, ctx: z.core.$RefinementCtx): T | null => {
    if (!value) return null
    const reading = read(value)
    if (reading.kind === 'read') return reading.value
    ctx.addIssue({ code: 'custom', message: reading.message })
    return z.NEVER
  }
}

const filterValue = <T>(read: (value: string) => FilterReading<T>) => z.string().optional().transform(readFilter(read))
const statusList = readFilter((value) => readEnumList('status', value, ORDER_STATUSES))

// A datetime-local field sends its time without a zone: it is UTC, the zone the console shows every time in (format.ts `when`).
const timeBound = (name: string) => filterValue((value) => readTime(name, value, { zonelessAsUtc: true }))

/**
 * The orders list's query string: the API's filters (statuses ticked one by one, or its comma
 * list; date-times; a page size), a keyset cursor, the mode and (operators) a business.
 */
export const orderListQuerySchema = z.object({
  mode: z.string().max(8).optional(),
  status: several(z.string()).transform((values, ctx) => statusList(values.filter((value) => value !== '').join(','), ctx)),
  placement_id: z.union([z.literal(''), z.string().refine(isUuid, 'must be a placement id')]).optional(),
  created_gte: timeBound('created_gte'),
  created_lt: timeBound('created_lt'),
  business: z.union([z.literal(''), z.string().refine(isUuid, 'must be a business id')]).optional(),
  limit: filterValue((value) => readInteger('limit', value, { min: 1, max: 100 })).transform((limit) => limit ?? PAGE_SIZE),
  after: z.string().max(80).regex(/^[0-9T:.\-Z]+_ORD-/, 'is not a page cursor').refine((value) => isOrderId(value.split('_')[1] ?? '') && isStorableTime(Date.parse(value.split('_')[0] ?? '')), 'is not a page cursor').optional(),
})

export type OrderListQuery = z.infer<typeof orderListQuerySchema>

/** The repository's filter for one page (one extra row tells whether there is a next page). */
export function orderFilterOf(query: OrderListQuery): OrderFilter {
  const [afterAt, afterId] = query.after ? query.after.split('_') : []
  return {
    statuses: query.status,
    placementId: query.placement_id || null,
    createdGte: query.created_gte,
    createdLt: query.created_lt,
    after: afterId ? { createdAt: new Date(afterAt), id: afterId } : null,
    limit: query.limit + 1,
  }
}

/**
 * The query string of the current filters, without the cursor: the base of the next page's link.
 * A status list is one `status=` per status, as the form's boxes send it; times are written as the
 * form's fields hold them.
 */
export function filterParams(query: OrderListQuery): URLSearchParams {
  const params = new URLSearchParams()
  for (const [key, value] of Object.entries(query)) {
    if (key === 'after') continue
    for (const item of [value ?? []].flat()) {
      const text = item instanceof Date ? utcInputValue(item) : String(item)
      if (text !== '') params.append(key, text)
    }
  }
  return params
}
