import { z } from 'zod'
import { parseJsonAs } from '../parse-json.js'
import type { Order } from '../db/orders.js'
import type { RedisClient } from '../redis.js'
import { resumeTrail } from './positions.js'

/**
 * What a courier's stream says (DESIGN 14): a new offer, an offer taken back, an order cancelled;
 * and, which DESIGN 14 leaves unsaid but an app showing the courier's orders must hear, an order
 * handed back to dispatch (an operator's unassign) and one given them by hand (an operator's
 * assignment, not an offer they accepted).
 */
export const COURIER_NOTICE_EVENTS = ['offer', 'offer_withdrawn', 'order_cancelled', 'order_unassigned', 'order_assigned'] as const
export type CourierNoticeEvent = (typeof COURIER_NOTICE_EVENTS)[number]

/** Where a notice stands in its courier's log (a Redis stream entry id): the SSE event's `id`. */
const NOTICE_ID = /^\d{1,15}-\d{1,15}$/

/** A notice as it travels on a courier's channel; `id` its place in the courier's log. */
const noticeMessageSchema = z.object({ event: z.enum(COURIER_NOTICE_EVENTS), data: z.record(z.string(), z.unknown()), id: z.string().regex(NOTICE_ID).optional() })
export type CourierNoticeMessage = z.infer<typeof noticeMessageSchema>

/**
 * How many of a courier's notices are kept, and for how long after the last: what a stream that
 * reconnects with `Last-Event-ID` (a phone between cells) is told again. Longer away, the app
 * reads its orders and offers again, as it does on any start.
 */
const NOTICE_LOG_MAX = 100
const NOTICE_LOG_TTL_S = 3600

export interface CourierNotice {
  courierId: string
  event: CourierNoticeEvent
  data: Record<string, unknown>
}

/** The Redis pub/sub channel of one courier's stream: any gateway replica serves any courier. */
export function courierChannel(prefix: string, courierId: string): string {
  return `${prefix}:courier-stream:${courierId}`
}

/** The Redis stream that keeps a courier's last notices, for a stream that reconnects. */
function courierNoticeLog(prefix: string, courierId: string): string {
  return `${prefix}:courier-notices:${courierId}`
}

/**
 * Tells the courier: kept in their log first (NOTICE_LOG_MAX, NOTICE_LOG_TTL_S), then published
 * with its place there, so a stream open now hears it and one that reconnects with that place
 * is told what came after. Data about an order, never more than the courier's own views hold.
 */
export async function tellCourier(redis: RedisClient, prefix: string, notice: CourierNotice): Promise<void> {
  const message: CourierNoticeMessage = { event: notice.event, data: notice.data }
  const log = courierNoticeLog(prefix, notice.courierId)
  // Trimmed exactly, so the log holds the last NOTICE_LOG_MAX and a replay returns them all.
  const id = await redis.xadd(log, 'MAXLEN', NOTICE_LOG_MAX, '*', 'notice', JSON.stringify(message))
  await Promise.all([redis.expire(log, NOTICE_LOG_TTL_S), redis.publish(courierChannel(prefix, notice.courierId), JSON.stringify({ ...message, id: id ?? undefined }))])
}

/** A message of a courier's channel as a notice, or null when it is none (garbled, or another version's event). */
export function readCourierNotice(message: string): CourierNoticeMessage | null {
  return parseJsonAs(noticeMessageSchema, message)
}

/** `Last-Event-ID` as a place in a courier's log, or null when it is none (absent, or not one we gave). */
export function noticeIdOf(header: string | string[] | undefined): string | null {
  return typeof header === 'string' && NOTICE_ID.test(header) ? header : null
}

/** Whether notice id `a` comes after `b` in a log (Redis stream ids: milliseconds, then a sequence). */
export function noticeIdAfter(a: string, b: string): boolean {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number)
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number)
  return aMs > bMs || (aMs === bMs && aSeq > bSeq)
}

/**
 * The courier's notices kept after `after`, oldest first: what a reconnecting stream missed.
 * `complete`: the log still holds `after` itself, so nothing between it and the first returned
 * was trimmed or expired.
 */
export async function noticesSince(redis: RedisClient, prefix: string, courierId: string, after: string): Promise<{ notices: CourierNoticeMessage[]; complete: boolean }> {
  const entries = await redis.xrange(courierNoticeLog(prefix, courierId), after, '+', 'COUNT', NOTICE_LOG_MAX + 1)
  const complete = entries[0]?.[0] === after
  const notices = entries.filter(([id]) => id !== after).flatMap(([id, fields]) => {
    const notice = readCourierNotice(fields[1] ?? '')
    return notice ? [{ ...notice, id }] : []
  })
  return { notices, complete }
}

/**
 * After an order change commits, what it means for couriers: each hears their notices, and a
 * courier it gave the order starts its trail at their next fix. A Redis hiccup costs a notice (or
 * the trail's first TRAIL_IDLE_S), never the change.
 */
export async function tellCouriers(redis: RedisClient, prefix: string, change: CourierChange, onError: (err: unknown) => void): Promise<void> {
  const given = courierGiven(change)
  const trail = given === null ? [] : [resumeTrail(redis, prefix, given).catch(onError)]
  await Promise.all([...trail, ...change.notices.map((notice) => tellCourier(redis, prefix, notice).catch(onError))])
}

/** What `tellCouriers` reads of a committed change. */
type CourierChange = { notices: CourierNotice[]; row: Pick<Order, 'status' | 'courierId'> }

/** The registered courier the change gave the order to, if it did. */
export const courierGiven = ({ row }: CourierChange): string | null => (row.status === 'assigned' ? row.courierId : null)
