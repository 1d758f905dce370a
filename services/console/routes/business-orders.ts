import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { ORDER_STATUSES } from '../../../shared/courier.js'
import { findOrderById, listOrders, type Order } from '../../../shared/db/orders.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { isOrderId } from '../../../shared/ids.js'
import { cancellationTerms } from '../../../shared/orders/cancellation.js'
import { advanceTestOrder } from '../../../shared/orders/sandbox-advance.js'
import { nextStatuses } from '../../../shared/orders/state-machine.js'
import { businessIdOf, frameOf, redirectWith, sendPage, sendProofPhoto } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { livemodeOf, modeQuery, readForm } from '../forms.js'
import { html } from '../html.js'
import { orderFilterOf, orderListQuerySchema } from '../order-list.js'
import { changeOrderAndTell, orderChangeFlash } from '../outcomes.js'
import { field, form, select } from '../pages/layout.js'
import { orderDetail, orderFilters, orderPage } from '../pages/orders.js'

const cancelSchema = z.object({ _csrf: z.string(), reason: z.string().trim().max(500).optional() })
const advanceSchema = z.object({ _csrf: z.string(), to: z.enum(ORDER_STATUSES), reason: z.string().trim().max(500).optional() })

/** A business's orders: the list with the API's filters, one order's page, cancel, and (test orders) advance. */
export default async function businessOrderRoutes(app: FastifyInstance, deps: ConsoleDeps) {
  const { sql, reads, photos } = deps
  /** The caller's own order, live or test; anyone else's is "not found". */
  async function ownOrder(request: FastifyRequest<{ Params: { id: string } }>): Promise<Order | null> {
    const order = isOrderId(request.params.id) ? await findOrderById(sql, request.params.id) : null
    return order && order.businessId === businessIdOf(request) ? order : null
  }

  app.get('/console/orders', async (request, reply) => {
    const query = readForm(orderListQuerySchema, request.query)
    const livemode = livemodeOf(query)
    const rows = await listOrders(reads, { businessId: businessIdOf(request), livemode }, orderFilterOf(query))
    const body = html`${orderFilters('/console/orders', query, livemode ? html`` : html`<input type="hidden" name="mode" value="test">`)}
${orderPage('/console/orders', query, rows)}`
    return sendPage(reply, 200, frameOf(request, reply, livemode), { title: 'Orders', path: '/console/orders', body })
  })

  app.get<{ Params: { id: string } }>('/console/orders/:id', async (request, reply) => {
    const order = await ownOrder(request)
    if (!order) return reply.callNotFound()
    const terms = cancellationTerms(order, await getPlatformRates(sql), new Date(), 'business')
    const frame = frameOf(request, reply, order.livemode)
    const cancel = terms.cancellable
      ? form(frame, `/console/orders/${order.id}/cancel`, html`${field({ name: 'reason', id: 'field-cancel-reason', label: 'Reason for cancelling (optional)', attrs: html` maxlength="255"` })}<button type="submit">Cancel order</button>`, { label: 'Cancel this order' })
      : html``
    const moves = nextStatuses(order.status, 'dispatch')
    const advance = !order.livemode && moves.length > 0
      ? html`<h2>Move this test order</h2>${form(frame, `/console/orders/${order.id}/advance`, html`${select({ name: 'to', label: 'Next status', options: moves.map((status) => [status, status] as const) })}
${field({ name: 'reason', id: 'field-advance-reason', label: 'Reason (optional)', attrs: html` maxlength="255"` })}<button type="submit">Advance order</button>`, { label: 'Advance this test order' })}`
      : html``
    const body = orderDetail(order, terms, html`${cancel}${advance}<p><a href="/console/orders${modeQuery(order.livemode)}">All orders</a></p>`, `/console/orders/${order.id}/proof/photo`)
    return sendPage(reply, 200, frame, { title: `Order ${order.id}`, path: '/console/orders', body })
  })

  // The delivery photo of the business's own order, from the photo store (DESIGN 14).
  app.get<{ Params: { id: string } }>('/console/orders/:id/proof/photo', async (request, reply) => {
    const order = await ownOrder(request)
    if (!order) return reply.callNotFound()
    return sendProofPhoto(reply, photos, order)
  })

  app.post<{ Params: { id: string } }>('/console/orders/:id/cancel', async (request, reply) => {
    const input = readForm(cancelSchema, request.body)
    const order = await ownOrder(request)
    if (!order) return reply.callNotFound()
    const outcome = await changeOrderAndTell(deps, request.log, { orderId: order.id, scope: { businessId: order.businessId, livemode: order.livemode } }, { kind: 'cancel', by: 'business', reason: input.reason || null })
    return redirectWith(request, reply, `/console/orders/${order.id}`, orderChangeFlash(outcome, 'cancel'))
  })

  app.post<{ Params: { id: string } }>('/console/orders/:id/advance', async (request, reply) => {
    const input = readForm(advanceSchema, request.body)
    const order = await ownOrder(request)
    if (!order || order.livemode) return reply.callNotFound()
    const outcome = await advanceTestOrder(sql, { orderId: order.id, businessId: order.businessId }, input.to, input.reason || null)
    return redirectWith(request, reply, `/console/orders/${order.id}`, orderChangeFlash(outcome, 'advance'))
  })
}
