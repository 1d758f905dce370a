import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { disableCourierAndAnnounce, type CourierDisabled } from '../../../shared/couriers/accounts.js'
import { lastFixes, shiftsOf } from '../../../shared/couriers/positions.js'
import { afterCourierLeft, type LeftByCourier } from '../../../shared/dispatch/after-change.js'
import { findActiveOrdersOfCouriers, listCouriers } from '../../../shared/db/couriers.js'
import { listOrdersWaitingForCourier } from '../../../shared/db/dispatch-sweep.js'
import { isUuid } from '../../../shared/ids.js'
import type { RedisClient } from '../../../shared/redis.js'
import { actorOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { readForm } from '../forms.js'
import { html } from '../html.js'
import { courierTable, waitingTable, type CourierPresence } from '../pages/couriers.js'
import { actionButton } from '../pages/layout.js'

// DESIGN 14: an order `created` for longer than this is one the operator should look at.
const WAITING_AFTER_S = 120
const COURIERS_SHOWN = 200
const WAITING_SHOWN = 100
const csrfOnly = z.object({ _csrf: z.string() })

/** The couriers (shift, last fix, orders held, disable) and the live orders still waiting for one. */
export default async function operatorCourierRoutes(app: FastifyInstance, { sql, reads, config, redis, announce, dispatch }: ConsoleDeps) {
  app.get('/console/ops/couriers', async (request, reply) => {
    const frame = frameOf(request, reply)
    const couriers = await listCouriers(sql, COURIERS_SHOWN + 1)
    const shown = couriers.slice(0, COURIERS_SHOWN)
    const ids = shown.map((courier) => courier.id)
    const [orders, presence] = await Promise.all([findActiveOrdersOfCouriers(sql, ids), presenceOf(redis, config.QUEUE_PREFIX, ids)])
    if (!presence) request.log.warn('courier positions unavailable')
    const lines = shown.map((courier) => ({ courier, presence: presence?.get(courier.id) ?? null, activeOrders: orders.get(courier.id) ?? [] }))
    const body = html`<p>Shift and last fix are what each courier's phone last reported. Disabling revokes every token of the courier at once and hands their assigned orders back to dispatch; an order already picked up stays with them.</p>
${courierTable(lines, new Date(), (courier) => actionButton(frame, `/console/ops/couriers/${courier.id}/disable`, `Disable ${courier.name}`))}
${couriers.length > COURIERS_SHOWN ? html`<p>Showing the newest ${COURIERS_SHOWN} couriers.</p>` : ''}`
    return sendPage(reply, 200, frame, { title: 'Couriers', path: '/console/ops/couriers', body })
  })

  app.post<{ Params: { id: string } }>('/console/ops/couriers/:id/disable', async (request, reply) => {
    readForm(csrfOnly, request.body)
    const redispatch = (left: LeftByCourier) => afterCourierLeft({ redis, prefix: config.QUEUE_PREFIX, dispatch }, left, (err) => request.log.warn({ err }, 'courier notice lost'))
    const disabled = isUuid(request.params.id) ? await disableCourierAndAnnounce(sql, actorOf(request), request.params.id, { announce, redispatch }) : null
    if (!disabled) return reply.callNotFound()
    return redirectWith(request, reply, `/console/ops/couriers#courier-${disabled.courierId}`, { kind: 'ok', text: disabledText(disabled) })
  })

  app.get('/console/ops/waiting', async (request, reply) => {
    const orders = await listOrdersWaitingForCourier(reads, WAITING_AFTER_S, WAITING_SHOWN + 1)
    const body = html`<p>Live orders <code>created</code> for more than ${WAITING_AFTER_S / 60} minutes (since they were placed, or last handed back), longest waiting first.</p>
${waitingTable(orders.slice(0, WAITING_SHOWN), new Date())}${orders.length > WAITING_SHOWN ? html`<p>Showing the oldest ${WAITING_SHOWN}.</p>` : ''}`
    return sendPage(reply, 200, frameOf(request, reply), { title: 'Waiting for a courier', path: '/console/ops/waiting', body })
  })
}

/** Each courier's shift and last fix; null when Redis cannot answer (the page still shows the rest). */
async function presenceOf(redis: RedisClient, prefix: string, ids: string[]): Promise<Map<string, CourierPresence> | null> {
  try {
    const [shifts, fixes] = await Promise.all([shiftsOf(redis, prefix, ids), lastFixes(redis, prefix, ids)])
    return new Map(ids.map((id) => [id, { shift: shifts.get(id) ?? 'offline', fix: fixes.get(id) ?? null }]))
  } catch {
    return null
  }
}

function disabledText(disabled: CourierDisabled): string {
  const list = (ids: string[]) => (ids.length === 0 ? 'none' : ids.join(', '))
  return `Courier ${disabled.courierId} is disabled; ${disabled.tokensRevoked} token(s) revoked. `
    + `Handed back to dispatch: ${list(disabled.handedBack)}. Still with the courier (already picked up): ${list(disabled.stillWithCourier)}.`
}
