import type { CourierFix, Point } from '../../../shared/courier.js'
import type { Order } from '../../../shared/db/orders.js'
import { when } from '../format.js'
import { html, type Html } from '../html.js'

// The recipient's tracking page (DESIGN 14): phone-sized, no script, refreshing itself, and
// nothing beyond what the recipient needs: no phone, no price, no full name.

const REFRESH_S = 20
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
  /** The courier's last fix while the order is on its way, else null. */
  courierAt: CourierFix | null
  eta: { stage: 'pickup' | 'dropoff'; at: string } | null
}

export function trackingPage({ order, courierAt, eta }: TrackingView): string {
  const active = order.status === 'assigned' || order.status === 'picked_up'
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
${eta && active ? html`<p class="card">Expected at the ${eta.stage === 'pickup' ? 'pickup' : 'door'} around <strong>${when(eta.at).slice(11, 16)} UTC</strong></p>` : ''}
${order.deliveryPin && active ? html`<div class="card"><p>Give the courier this PIN when your parcel arrives:</p><p class="pin">${order.deliveryPin}</p></div>` : ''}
${firstName && order.status !== 'created' && order.status !== 'cancelled' ? html`<p class="card">Your courier: <strong>${firstName}</strong>${vehicle ? html`, by ${vehicle}` : ''}</p>` : ''}
${active ? map(order, courierAt) : ''}
<div class="card"><h2>History</h2><ol>${order.history.map((step) => html`<li>${step.status.replace('_', ' ')}, ${when(step.at)}</li>`)}</ol></div>
<p><small>This page refreshes itself.</small></p>
</main></body></html>`
  return page.text
}

/** The pickup, the dropoff and the courier on a plain SVG: no tiles, no internet. */
function map(order: Order, courierAt: CourierFix | null): Html {
  const points: [string, Point, string][] = []
  if (order.pickupLat !== null && order.pickupLng !== null) points.push(['Pickup', { lat: order.pickupLat, lng: order.pickupLng }, '#2f6f3e'])
  if (order.dropoffLat !== null && order.dropoffLng !== null) points.push(['You', { lat: order.dropoffLat, lng: order.dropoffLng }, '#a33b20'])
  if (courierAt) points.push(['Courier', { lat: courierAt.latitude, lng: courierAt.longitude }, '#1f4fa3'])
  if (points.length === 0) return html``
  const lats = points.map(([, p]) => p.lat)
  const lngs = points.map(([, p]) => p.lng)
  const span = Math.max(Math.max(...lats) - Math.min(...lats), Math.max(...lngs) - Math.min(...lngs), 0.005)
  const [width, height, pad] = [320, 220, 30]
  const x = (lng: number) => pad + ((lng - Math.min(...lngs)) / span) * (width - 2 * pad)
  const y = (lat: number) => height - pad - ((lat - Math.min(...lats)) / span) * (height - 2 * pad)
  return html`<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="Map of the pickup, your address and the courier">
${points.map(([label, p, colour]) => html`<circle cx="${x(p.lng).toFixed(1)}" cy="${y(p.lat).toFixed(1)}" r="7" fill="${colour}"></circle><text x="${(x(p.lng) + 10).toFixed(1)}" y="${(y(p.lat) + 4).toFixed(1)}" font-size="12">${label}</text>`)}
</svg>`
}
