import type { CourierFix } from '../../../shared/courier.js'
import type { Order } from '../../../shared/db/orders.js'
import { clocksOf } from '../format.js'
import { html } from '../html.js'
import { trackingMap, type TileSource } from './tracking-map.js'

// The recipient's tracking page (DESIGN 14): phone-sized, no script, refreshing itself, and
// nothing beyond its list: no phone, no price, no full name, no address.

const REFRESH_S = 20
// Fixes come every few seconds: an ETA past by more than this is a courier no longer heard from.
const ETA_GRACE_MS = 2 * 60 * 1000
const STATUS_LINES: Record<string, string> = {
  created: 'Your order is waiting for a courier',
  assigned: 'A courier is on the way to pick up your parcel',
  picked_up: 'Your parcel is on its way',
  delivered: 'Delivered',
  failed: 'Delivery failed; the parcel goes back to the sender',
  returned: 'Returned to the sender',
  cancelled: 'This delivery was cancelled',
}
const VEHICLES: Record<string, string> = { bike: 'motorbike', car: 'car', bus_van: 'van', truck: 'truck' }

export interface TrackingView {
  order: Order
  /** The recipient's clock (TRACKING_TIME_ZONE): times are shown there, with its name. */
  timeZone: string
  now: Date
  /** The courier's last fix while the order is on its way, else null. */
  courierAt: CourierFix | null
  eta: { stage: 'pickup' | 'dropoff'; at: string } | null
  /** Map tiles to draw the courier over; null: their position in words. */
  tiles: TileSource | null
}

export function trackingPage({ order, courierAt, eta, tiles, timeZone, now }: TrackingView): string {
  const active = order.status === 'assigned' || order.status === 'picked_up'
  const { clock, dated } = clocksOf(timeZone)
  // The ETA counts from the courier's last fix: one that has just passed is a courier at the door
  // (shown as now); one long gone is a phone gone quiet, and promises nothing (the page still shows
  // where the courier was last heard from).
  const due = eta && active ? Date.parse(eta.at) : null
  const expected = eta && due !== null && due >= now.getTime() - ETA_GRACE_MS ? { stage: eta.stage, at: new Date(Math.max(due, now.getTime())) } : null
  const firstName = order.courier?.name.trim().split(/\s+/)[0] ?? null
  const vehicle = order.courier?.vehicle_type ? VEHICLES[order.courier.vehicle_type] : null
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><meta http-equiv="refresh" content="${active || order.status === 'created' ? REFRESH_S : 300}">
<title>Delivery ${order.id}: ${order.status.replace('_', ' ')}</title>
<style>body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#f6f6f4}main{max-width:28rem;margin:0 auto;padding:1rem}
h1{font-size:1.3rem}.card{background:#fff;border-radius:.6rem;padding:.8rem 1rem;margin:.8rem 0;box-shadow:0 1px 2px #0002}
.pin{font-size:2rem;letter-spacing:.4rem;font-weight:700}svg{width:100%;height:auto;background:#e8efe6;border-radius:.6rem}
ol{padding-left:1.2rem}small{color:#555}</style></head>
<body><main>
<p><small>Delivery ${order.id}</small></p>
<h1>${STATUS_LINES[order.status] ?? order.status}</h1>
${expected ? html`<p class="card">Expected at the ${expected.stage === 'pickup' ? 'pickup' : 'door'} around <strong>${clock.format(expected.at)}</strong></p>` : ''}
${order.deliveryPin && (active || order.status === 'created') ? html`<div class="card"><p>Give the courier this PIN when your parcel arrives:</p><p class="pin">${order.deliveryPin}</p></div>` : ''}
${firstName && order.status !== 'created' && order.status !== 'cancelled' ? html`<p class="card">Your courier: <strong>${firstName}</strong>${vehicle ? html`, by ${vehicle}` : ''}</p>` : ''}
${active && courierAt ? html`<div class="card"><p>Your courier was last at ${courierAt.latitude.toFixed(4)}, ${courierAt.longitude.toFixed(4)}, at ${clock.format(new Date(courierAt.at))}.</p>${tiles ? trackingMap(courierAt, tiles) : ''}</div>` : ''}
<div class="card"><h2>History</h2><ol>${order.history.map((step) => html`<li>${step.status.replace('_', ' ')}, ${dated.format(new Date(step.at))}</li>`)}</ol></div>
<p><small>This page refreshes itself.</small></p>
</main></body></html>`
  return page.text
}
