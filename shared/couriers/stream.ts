import { z } from 'zod'
import { parseJsonAs } from '../parse-json.js'
import type { Order } from '../db/orders.js'
import type { RedisClient } from '../redis.js'
import { resumeTrail } from './positions.js'

/**
 * What a courier's stream says (DESIGN 14): a new offer, an offer taken back, an order cancelled;
 * and an order handed back to dispatch (an operator's unassign), which DESIGN 14 leaves unsaid but
 * an app showing the order as theirs must hear.
 */
export const COURIER_NOTICE_EVENTS = ['offer', 'offer_withdrawn', 'order_cancelled', 'order_unassigned'] as const
export type CourierNoticeEvent = (typeof COURIER_NOTICE_EVENTS)[number]

/** A notice as it travels on a courier's channel. */
const noticeMessageSchema = z.object({ event: z.enum(COURIER_NOTICE_EVENTS), data: z.record(z.string(), z.unknown()) })
export type CourierNoticeMessage = z.infer<typeof noticeMessageSchema>

export interface CourierNotice {
  courierId: string
  event: CourierNoticeEvent
  data: Record<string, unknown>
}

/** The Redis pub/sub channel of one courier's stream: any gateway replica serves any courier. */
export function courierChannel(prefix: string, courierId: string): string {
  return `${prefix}:courier-stream:${courierId}`
}

/** Tells the courier, if connected; a notice nobody hears is lost, and `GET /v2/courier/offers` still shows the truth. */
export async function tellCourier(redis: RedisClient, prefix: string, notice: CourierNotice): Promise<void> {
  const message: CourierNoticeMessage = { event: notice.event, data: notice.data }
  await redis.publish(courierChannel(prefix, notice.courierId), JSON.stringify(message))
}

/** A message of a courier's channel as a notice, or null when it is none (garbled, or another version's event). */
export function readCourierNotice(message: string): CourierNoticeMessage | null {
  return parseJsonAs(noticeMessageSchema, message)
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
