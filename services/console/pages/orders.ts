import { ORDER_STATUSES, type OrderMover } from '../../../shared/courier.js'
import type { CancellationTerms } from '../../../shared/orders/cancellation.js'
import type { Order } from '../../../shared/db/orders.js'
import { deliveryStep, photoRequired } from '../../../shared/orders/resource.js'
import { money, utcInputValue, when } from '../format.js'
import { html, type Html } from '../html.js'
import { filterParams, PAGE_SIZE, type OrderListQuery } from '../order-list.js'
import { field, select } from './layout.js'

const PAGE_SIZES = [PAGE_SIZE, 50, 100]

/**
 * The filters of the orders list, as the API has them: statuses (none ticked: any), placement,
 * a creation window in UTC (the zone of every time the list shows) and the page size.
 */
export function orderFilters(action: string, query: OrderListQuery, extra: Html = html``): Html {
  const sizes = [...new Set([...PAGE_SIZES, query.limit])].sort((a, b) => a - b).map((size) => [String(size), String(size)] as const)
  // step="any": a bound with seconds (from a link) is a valid value, and the form sends it back unchanged.
  const bound = (name: string, label: string, at: Date | null) => field({ name, label, type: 'datetime-local', value: at ? utcInputValue(at) : '', attrs: html` step="any"` })
  return html`<form method="get" action="${action}" aria-label="Filter orders" class="filters">${extra}
<fieldset><legend>Status (none ticked: any)</legend>${ORDER_STATUSES.map((status) => html`<label><input type="checkbox" id="field-status-${status}" name="status" value="${status}"${query.status?.includes(status) ? html` checked` : ''}> ${status}</label> `)}</fieldset>
${field({ name: 'placement_id', label: 'Placement id', value: query.placement_id })}
${bound('created_gte', 'Created at or after (UTC)', query.created_gte)}${bound('created_lt', 'Created before (UTC)', query.created_lt)}
${select({ name: 'limit', label: 'Orders per page', options: sizes, value: String(query.limit) })}
<button type="submit">Filter</button></form>`
}

/**
 * One page of the list: its orders (the rows hold one more than the page when a next page
 * exists) linking to `path/{id}`, and the keyset link to the next page, which keeps every filter.
 */
export function orderPage(path: string, query: OrderListQuery, rows: Order[], showBusiness = false): Html {
  const shown = rows.slice(0, query.limit)
  return html`${orderTable(shown, (order) => `${path}/${order.id}`, showBusiness)}
${nextPageLink(path, filterParams(query), shown.at(-1), rows.length > query.limit)}`
}

function orderTable(orders: Order[], linkOf: (order: Order) => string, showBusiness: boolean): Html {
  if (orders.length === 0) return html`<p>No orders match.</p>`
  return html`<table><caption class="visually-hidden">Orders</caption><thead><tr><th scope="col">Order</th>${showBusiness ? html`<th scope="col">Business</th>` : ''}<th scope="col">Status</th>
<th scope="col">Recipient</th><th scope="col" class="num">Price</th><th scope="col">Created</th></tr></thead><tbody>
${orders.map((order) => html`<tr><td><a href="${linkOf(order)}">${order.id}</a></td>${showBusiness ? html`<td>${order.businessId}</td>` : ''}<td>${order.status}</td>
<td>${String(order.shipment.recipient_name ?? '')}</td><td class="num">${money(order.price, order.currency)}</td><td>${when(order.createdAt)}</td></tr>`)}
</tbody></table>`
}

/** The keyset link to the next page: strictly after the last order shown. */
function nextPageLink(path: string, params: URLSearchParams, last: Order | undefined, hasMore: boolean): Html {
  if (!hasMore || !last) return html``
  const next = new URLSearchParams(params)
  next.set('after', `${last.createdAt.toISOString()}_${last.id}`)
  return html`<p><a href="${path}?${next.toString()}" rel="next">Next page</a></p>`
}

/**
 * One order: what was sent, its price, courier, proof of delivery, tracking link, cancellation
 * terms and history. `actions` are the forms the viewer may use; `photoHref` is where this viewer
 * opens the delivery photo.
 */
export function orderDetail(order: Order, terms: CancellationTerms, actions: Html, photoHref: string): Html {
  const shipment = order.shipment
  return html`<div class="cards">
<div class="card"><h2>Status</h2><p><strong>${order.status}</strong> (version ${order.version})</p><p>${order.livemode ? 'Live order' : 'Test order'}</p></div>
<div class="card"><h2>Price</h2><p>${money(order.price, order.currency)}</p><p>${order.optionLabel ?? order.vehicleType}, ${order.distanceKm} km</p>
${order.refundedAmount > 0 ? html`<p>Refunded ${money(order.refundedAmount, order.currency)}</p>` : ''}</div>
<div class="card"><h2>Courier</h2>${order.courier ? html`<p>${order.courier.name}<br>${order.courier.phone}${order.courier.vehicle_plate ? html`<br>${order.courier.vehicle_plate}` : ''}</p>` : html`<p>None assigned</p>`}</div>
${proofCard(order, photoHref)}
${order.trackingUrl ? html`<div class="card"><h2>Tracking</h2><p><a href="${order.trackingUrl}" id="tracking-link" rel="noreferrer">The recipient's tracking page</a></p><p>For the recipient: the status, the courier on a map and the ETA${order.deliveryPin ? ', and the PIN to give at the door' : ''}.</p></div>` : ''}
<div class="card"><h2>Cancellation</h2>${terms.cancellable
    ? html`<p>Cancelling now costs ${money(terms.fee ?? 0, order.currency)}; the refund would be ${money(order.price - (terms.fee ?? 0), order.currency)}.</p>${terms.freeUntil ? html`<p>Free until ${when(terms.freeUntil)}</p>` : ''}`
    : html`<p>This order can no longer be cancelled.</p>`}</div></div>
<h2>Delivery</h2><dl>
<dt>Item</dt><dd>${String(shipment.item_name ?? '')}, ${String(shipment.quantity ?? '')} × ${String(shipment.weight ?? '')} kg</dd>
<dt>From</dt><dd>${String(shipment.pickup_address ?? 'the business address')}</dd>
<dt>To</dt><dd>${String(shipment.recipient_name ?? '(erased)')}, ${String(shipment.recipient_phone ?? '')}<br>${String(shipment.dropoff_address ?? '')}, ${String(shipment.dropoff_state ?? '')}</dd>
<dt>Placement</dt><dd>${order.placementId}</dd></dl>
<h2>History</h2><table><thead><tr><th scope="col">Status</th><th scope="col">At</th><th scope="col">Reason</th></tr></thead><tbody>
${order.history.map((step) => html`<tr><td>${step.status}</td><td>${when(step.at)}</td><td>${step.reason ?? ''}</td></tr>`)}</tbody></table>
${actions}`
}

/** How a delivery without its proof came about, by who made it. */
const DELIVERED_BY: Record<OrderMover, string> = {
  courier: 'delivered by the courier',
  operator: 'delivered by an operator',
  sandbox: 'marked delivered in test mode',
  business: 'marked delivered by the business',
}

/** The PIN to pass to the recipient while the order is on its way; once delivered, how it was delivered (DESIGN 14). */
function proofCard(order: Order, photoHref: string): Html {
  if (order.status === 'delivered') {
    const step = deliveryStep(order)
    // A courier's delivery carries what the order asked for, so without it someone else delivered;
    // a step from before movers were kept names none: a test order's was the sandbox's, a live one's an operator's.
    const by = step?.by ?? (order.livemode ? 'operator' : 'sandbox')
    const pin = order.pinVerifiedAt ? 'PIN verified' : order.deliveryPin ? `PIN not verified (${DELIVERED_BY[by]})` : 'No PIN asked for'
    const where = order.deliveredLat !== null && order.deliveredLng !== null ? html`<br>Courier at ${order.deliveredLat.toFixed(5)}, ${order.deliveredLng.toFixed(5)}` : ''
    const photo = order.photoKey
      ? html`<p><a href="${photoHref}"><img src="${photoHref}" alt="Delivery photo of ${order.id}" class="proof-photo" width="240"></a></p>`
      : photoRequired(order) ? html`<p>No photo (${by === 'courier' ? 'erased' : DELIVERED_BY[by]})</p>` : ''
    return html`<div class="card" id="proof"><h2>Proof of delivery</h2><p>${pin}${step ? html`<br>Delivered ${when(step.at)}` : ''}${where}</p>${photo}</div>`
  }
  if (order.deliveryPin && !['cancelled', 'failed', 'returned'].includes(order.status)) {
    return html`<div class="card"><h2>Delivery PIN</h2><p><strong>${order.deliveryPin}</strong></p><p>Give it to the recipient: the courier needs it to deliver.</p></div>`
  }
  return html``
}
