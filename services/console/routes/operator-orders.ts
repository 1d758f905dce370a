import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { ORDER_STATUSES } from '../../../shared/courier.js'
import { findOrderById, listOrders } from '../../../shared/db/orders.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { isOrderId } from '../../../shared/ids.js'
import { cancellationTerms } from '../../../shared/orders/cancellation.js'
import { nextStatuses } from '../../../shared/orders/state-machine.js'
import { actorOf, frameOf, redirectWith, sendPage, sendProofPhoto } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { livemodeOf, readForm } from '../forms.js'
import { html } from '../html.js'
import { orderFilterOf, orderListQuerySchema } from '../order-list.js'
import { changeOrderAndTell, orderChangeFlash } from '../outcomes.js'
import { field, form, select } from '../pages/layout.js'
import { orderDetail, orderFilters, orderPage } from '../pages/orders.js'

const optional = z.string().trim().max(255).optional().transform((value) => value || null)
const advanceSchema = z.object({ _csrf: z.string(), to: z.enum(ORDER_STATUSES), reason: optional, courier_name: optional, courier_phone: optional, vehicle_plate: optional })
const cancelSchema = z.object({ _csrf: z.string(), reason: optional })

/** Orders across businesses, with dispatch's `advance` and the operator's free cancel, both on the audit trail. */
export default async function operatorOrderRoutes(app: FastifyInstance, deps: ConsoleDeps) {
  const { sql, reads, photos } = deps
  app.get('/console/ops/orders', async (request, reply) => {
    const query = readForm(orderListQuerySchema, request.query)
    const livemode = livemodeOf(query)
    const rows = await listOrders(reads, { businessId: query.business || null, livemode }, orderFilterOf(query))
    const extra = html`<div class="field"><label for="field-business">Business id</label><input id="field-business" name="business" value="${query.business ?? ''}"></div>
${select({ name: 'mode', label: 'Mode', options: [['live', 'Live'], ['test', 'Test']], value: livemode ? 'live' : 'test' })}`
    const body = html`${orderFilters('/console/ops/orders', query, extra)}${orderPage('/console/ops/orders', query, rows, true)}`
    return sendPage(reply, 200, frameOf(request, reply), { title: 'Orders', path: '/console/ops/orders', body })
  })

  app.get<{ Params: { id: string } }>('/console/ops/orders/:id', async (request, reply) => {
    const order = isOrderId(request.params.id) ? await findOrderById(sql, request.params.id) : null
    if (!order) return reply.callNotFound()
    const frame = frameOf(request, reply)
    const terms = cancellationTerms(order, await getPlatformRates(sql), new Date(), 'operator')
    const moves = nextStatuses(order.status, 'dispatch')
    const advance = moves.length === 0 ? html`` : html`<h2>Advance</h2>${form(frame, `/console/ops/orders/${order.id}/advance`, html`
${select({ name: 'to', label: 'Next status', options: moves.map((status) => [status, status] as const) })}
${field({ name: 'courier_name', label: 'Courier name (when assigning)' })}${field({ name: 'courier_phone', label: 'Courier phone (when assigning)' })}
${field({ name: 'vehicle_plate', label: 'Vehicle plate (optional)' })}${field({ name: 'reason', id: 'field-advance-reason', label: 'Reason (needed to unassign or fail)', attrs: html` maxlength="255"` })}
<button type="submit">Advance order</button>`, { label: 'Advance this order' })}`
    const cancel = terms.cancellable
      ? html`<h2>Cancel</h2>${form(frame, `/console/ops/orders/${order.id}/cancel`, html`${field({ name: 'reason', id: 'field-cancel-reason', label: 'Reason for cancelling (optional)', attrs: html` maxlength="255"` })}<button type="submit">Cancel order (full refund)</button>`, { label: 'Cancel this order' })}`
      : html``
    const body = html`<p>Business <a href="/console/ops/businesses/${order.businessId}">${order.businessId}</a></p>${orderDetail(order, terms, html`${advance}${cancel}`, `/console/ops/orders/${order.id}/proof/photo`)}`
    return sendPage(reply, 200, frame, { title: `Order ${order.id}`, path: '/console/ops/orders', body })
  })

  app.get<{ Params: { id: string } }>('/console/ops/orders/:id/proof/photo', async (request, reply) => {
    const order = isOrderId(request.params.id) ? await findOrderById(sql, request.params.id) : null
    if (!order) return reply.callNotFound()
    return sendProofPhoto(reply, photos, order)
  })

  app.post<{ Params: { id: string } }>('/console/ops/orders/:id/advance', async (request, reply) => {
    const input = readForm(advanceSchema, request.body)
    if (!isOrderId(request.params.id)) return reply.callNotFound()
    const courier = input.to === 'assigned' && input.courier_name && input.courier_phone
      ? { name: input.courier_name, phone: input.courier_phone, vehicle_plate: input.vehicle_plate }
      : null
    const outcome = await changeOrderAndTell(deps, request.log, { orderId: request.params.id, scope: null }, { kind: 'advance', to: input.to, courier, reason: input.reason }, { actor: actorOf(request) })
    return redirectWith(request, reply, `/console/ops/orders/${request.params.id}`, orderChangeFlash(outcome, 'advance'))
  })

  app.post<{ Params: { id: string } }>('/console/ops/orders/:id/cancel', async (request, reply) => {
    const input = readForm(cancelSchema, request.body)
    if (!isOrderId(request.params.id)) return reply.callNotFound()
    const outcome = await changeOrderAndTell(deps, request.log, { orderId: request.params.id, scope: null }, { kind: 'cancel', by: 'operator', reason: input.reason }, { actor: actorOf(request) })
    return redirectWith(request, reply, `/console/ops/orders/${request.params.id}`, orderChangeFlash(outcome, 'cancel'))
  })
}
