import type { CourierFix, CourierShift } from '../../../shared/courier.js'
import type { CourierRow } from '../../../shared/db/couriers.js'
import type { WaitingOrder } from '../../../shared/db/dispatch-sweep.js'
import { when } from '../format.js'
import { html, type Html } from '../html.js'

/** Where a courier stands in Redis; null when Redis could not be asked. */
export type CourierPresence = { shift: CourierShift; fix: CourierFix | null } | null

export interface CourierLine {
  courier: CourierRow
  presence: CourierPresence
  activeOrders: { id: string; status: string }[]
}

/** How long ago, in the largest units that read at a glance: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function age(since: Date, now: Date): string {
  const s = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 1000))
  if (s < 60) return `${s} s`
  const min = Math.floor(s / 60)
  if (min < 60) return `${min} min`
  const h = Math.floor(min / 60)
  if (h < 24) return `${h} h ${min % 60} min`
  return `${Math.floor(h / 24)} d ${h % 24} h`
}

function shiftCell(line: CourierLine): Html {
  if (line.courier.disabledAt) return html`<td>—</td>`
  if (!line.presence) return html`<td>unknown (positions unavailable)</td>`
  return html`<td class="shift-${line.presence.shift}">${line.presence.shift}</td>`
}

function fixCell(presence: CourierPresence, now: Date): Html {
  if (!presence) return html`<td>unknown</td>`
  const { fix } = presence
  if (!fix) return html`<td>none</td>`
  return html`<td>${fix.latitude.toFixed(5)}, ${fix.longitude.toFixed(5)}<br><time datetime="${fix.at}">${age(new Date(fix.at), now)} ago</time></td>`
}

/** Every courier with their shift and last fix (from Redis) and the orders they hold; `disable` is the row's form. */
export function courierTable(lines: CourierLine[], now: Date, disable: (courier: CourierRow) => Html): Html {
  if (lines.length === 0) return html`<p>No couriers yet: create one with <code>npm run admin -- courier:create</code>.</p>`
  return html`<table aria-label="Couriers"><thead><tr><th scope="col">Courier</th><th scope="col">Phone</th><th scope="col">Vehicle</th><th scope="col" class="num">Max weight</th>
<th scope="col">Account</th><th scope="col">Shift</th><th scope="col">Last fix</th><th scope="col">Active orders</th><th scope="col">Action</th></tr></thead><tbody>
${lines.map((line) => {
    const { courier } = line
    return html`<tr id="courier-${courier.id}"><td>${courier.name}<br><code>${courier.id}</code></td><td>${courier.phone}</td><td>${courier.vehicleType}${courier.vehiclePlate ? html`<br>${courier.vehiclePlate}` : ''}</td>
<td class="num">${courier.maxWeightKg} kg</td><td>${courier.disabledAt ? `disabled ${when(courier.disabledAt)}` : 'enabled'}</td>${shiftCell(line)}${fixCell(line.presence, now)}
<td>${line.activeOrders.length === 0 ? 'none' : html`${line.activeOrders.length}: <ul>${line.activeOrders.map((order) => html`<li><a href="/console/ops/orders/${order.id}">${order.id}</a> (${order.status})</li>`)}</ul>`}</td>
<td>${courier.disabledAt ? '' : disable(courier)}</td></tr>`
  })}</tbody></table>`
}

/** Orders no courier has taken, oldest first: how long each has waited and whether an offer is out. */
export function waitingTable(orders: WaitingOrder[], now: Date): Html {
  if (orders.length === 0) return html`<p>No live order has waited that long.</p>`
  return html`<table aria-label="Orders waiting for a courier"><thead><tr><th scope="col">Order</th><th scope="col">Waiting</th><th scope="col">Business</th>
<th scope="col">Pickup area</th><th scope="col">Offer</th></tr></thead><tbody>
${orders.map((order) => html`<tr><td><a href="/console/ops/orders/${order.id}">${order.id}</a></td><td>${age(order.waitingSince, now)}<br><small>since ${when(order.waitingSince)}</small></td>
<td><a href="/console/ops/businesses/${order.businessId}">${order.businessName}</a></td><td>${order.pickupArea ?? 'unknown'}</td><td>${order.offerPending ? 'pending' : 'none'}</td></tr>`)}</tbody></table>`
}
