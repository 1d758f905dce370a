import { z } from 'zod'
import type { CourierShift } from '../../../shared/courier.js'
import type { CourierRow } from '../../../shared/db/couriers.js'
import type { Order } from '../../../shared/db/orders.js'
import { PHOTO_MAX_BYTES } from '../../../shared/storage/photos.js'
import { REASON_MAX_LENGTH } from '../../../shared/schemas/courier.js'
import { photoRequired } from '../../../shared/orders/resource.js'
import { clocksOf } from '../format.js'
import { html, type Html } from '../html.js'
import type { Flash } from '../session-store.js'
import { field, form, type Frame } from './layout.js'

// The courier web app's pages (DESIGN 14): phone-sized, every step a form that works without
// script; the one script (COURIER_JS, served as a file so the CSP allows only 'self') reports
// the browser's position and reloads the page when the courier's offer or orders change.
// What a courier sees of an order never holds its price or its PIN (DESIGN 17.4).

/** What a courier page's frame needs: who (null before login), the form token, the last action's message. */
export interface CourierFrame {
  courier: CourierRow | null
  csrf: string
  flash: Flash | null
}

/** An offer as `pendingOffers` shows it (`offerView`): the fields this page reads. */
export const offerShownSchema = z.object({
  offer_id: z.string(),
  order_id: z.string(),
  pickup: z.object({ address: z.string().nullable(), state: z.string().nullable() }),
  dropoff: z.object({ area: z.string().nullable(), distance_km: z.number().nullable() }),
  distance_to_pickup_km: z.number().nullable(),
  item: z.object({ name: z.unknown(), weight: z.unknown(), quantity: z.unknown(), is_fragile: z.unknown() }),
  expires_at: z.string(),
})
export type OfferShown = z.infer<typeof offerShownSchema>

export interface CourierHome {
  /** Null while the shift cannot be read (Redis away): the rest of the page still works. */
  shift: CourierShift | null
  offer: OfferShown | null
  orders: Order[]
  /** What the page shows, as /courier/state tells it: the script reloads when it changes. */
  state: string
}

const VEHICLES: Record<string, string> = { bike: 'Motorbike', car: 'Car', bus_van: 'Van', truck: 'Truck' }
const STATUS_LINES: Record<string, string> = {
  assigned: 'Go to the pickup',
  picked_up: 'On the way to the recipient',
  failed: 'Delivery failed: take it back to the sender',
}

/** `form` of the console's layout, for a frame without a console user. */
const formOf = (frame: CourierFrame, action: string, body: Html, extra: { multipart?: boolean; label?: string } = {}) =>
  form({ user: null, csrf: frame.csrf, flash: null } satisfies Frame, action, body, extra)

export function courierLayout(frame: CourierFrame, page: { title: string; body: Html; home?: CourierHome }): string {
  const home = page.home
  // Location matters while on shift or carrying an order; without script, the page refreshes itself while idle.
  const locate = home && (home.shift === 'available' || home.orders.length > 0) ? 'on' : 'off'
  const refresh = home && home.orders.length === 0 ? html`<noscript><meta http-equiv="refresh" content="20"></noscript>` : ''
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">${refresh}
<title>${page.title} · Courier</title><link rel="stylesheet" href="/courier/assets/courier.css">
${home ? html`<script src="/courier/assets/courier.js" defer></script>` : ''}</head>
<body${home ? html` data-csrf="${frame.csrf}" data-state="${home.state}" data-locate="${locate}"` : ''}>
<header><p class="brand">Courier</p>${frame.courier ? html`<p class="who">${frame.courier.name}<br><small>${VEHICLES[frame.courier.vehicleType] ?? frame.courier.vehicleType}${frame.courier.vehiclePlate ? html` · ${frame.courier.vehiclePlate}` : ''}</small></p>
${formOf(frame, '/courier/logout', html`<button type="submit" class="quiet">Log out</button>`, { label: 'Log out' })}` : ''}</header>
<main id="main"><h1>${page.title}</h1>
${frame.flash ? html`<p class="flash ${frame.flash.kind}" role="${frame.flash.kind === 'error' ? 'alert' : 'status'}">${frame.flash.text}</p>` : ''}
${page.body}</main></body></html>`.text
}

export function loginPage(frame: CourierFrame, values: { phone?: string; error?: string }): Html {
  return html`${values.error ? html`<p class="flash error" role="alert" id="login-error">${values.error}</p>` : ''}
<p>Log in with your phone number and the 6-digit code your operator gave you. A code works once, for a short time.</p>
${formOf(frame, '/courier/login', html`${field({ name: 'phone', label: 'Phone number', type: 'tel', value: values.phone, required: true, attrs: html` autocomplete="tel" maxlength="32"` })}
${field({ name: 'code', label: 'One-time code', required: true, attrs: html` inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6"` })}
<button type="submit">Log in</button>`, { label: 'Log in' })}`
}

/** The rider's home; times in `timeZone` (TRACKING_TIME_ZONE), as the tracking page shows them. */
export function homePage(frame: CourierFrame, home: CourierHome, now: Date, timeZone: string): Html {
  const available = home.shift === 'available'
  const shift = html`<section class="card" aria-labelledby="shift-heading"><h2 id="shift-heading">Shift</h2>
${home.shift === null ? html`<p id="shift-status">Your shift cannot be read right now; your orders below still work. Try again in a moment.</p>` : html`<p>You are <strong id="shift-status">${available ? 'available' : 'offline'}</strong>.</p>
${formOf(frame, '/courier/shift', html`<input type="hidden" name="status" value="${available ? 'offline' : 'available'}"><button type="submit"${available ? html` class="quiet"` : ''}>${available ? 'Go offline' : 'Go available'}</button>`, { label: 'Shift' })}`}
<p id="location-status" class="small" role="status">${available || home.orders.length > 0 ? 'Waiting for your phone\'s position…' : 'Your position is not shared while you are offline.'}</p></section>`
  const idle = home.orders.length === 0 && !home.offer
    ? html`<p class="card" id="no-offer">${available ? 'No offer right now. New offers appear here by themselves.' : 'Go available to receive offers.'}</p>` : ''
  return html`${shift}${home.offer ? offerCard(frame, home.offer, now, timeZone) : ''}${home.orders.map((order) => orderCard(frame, order))}${idle}`
}

function offerCard(frame: CourierFrame, offer: OfferShown, now: Date, timeZone: string): Html {
  const secondsLeft = Math.max(0, Math.round((Date.parse(offer.expires_at) - now.getTime()) / 1000))
  const item = offer.item
  return html`<section class="card offer" aria-labelledby="offer-heading" id="offer-${offer.offer_id}"><h2 id="offer-heading">New offer</h2><dl>
<dt>Pick up at</dt><dd>${offer.pickup.address ?? 'the sender\'s address'}${offer.pickup.state ? html`, ${offer.pickup.state}` : ''}</dd>
<dt>Drop-off area</dt><dd>${offer.dropoff.area ?? 'not given'}</dd>
${offer.distance_to_pickup_km === null ? '' : html`<dt>To the pickup</dt><dd>${offer.distance_to_pickup_km} km from you</dd>`}
<dt>Distance</dt><dd>${offer.dropoff.distance_km === null ? 'unknown' : `${offer.dropoff.distance_km} km`} pickup to drop-off</dd>
<dt>Item</dt><dd>${itemText(itemOf(item))}</dd>
<dt>Answer by</dt><dd><time datetime="${offer.expires_at}">${clocksOf(timeZone).clock.format(new Date(offer.expires_at))}</time> (${secondsLeft} s left)</dd></dl>
<div class="actions">${formOf(frame, `/courier/offers/${offer.offer_id}/accept`, html`<button type="submit">Accept</button>`, { label: 'Accept the offer' })}
${formOf(frame, `/courier/offers/${offer.offer_id}/decline`, html`<button type="submit" class="quiet">Decline</button>`, { label: 'Decline the offer' })}</div></section>`
}

function itemOf(item: Record<string, unknown>): { name: string | null; weight: number | null; quantity: number | null; is_fragile: boolean | null } {
  return {
    name: typeof item.name === 'string' && item.name !== '' ? item.name : null,
    weight: typeof item.weight === 'number' ? item.weight : null,
    quantity: typeof item.quantity === 'number' ? item.quantity : null,
    is_fragile: item.is_fragile === true,
  }
}

function itemText(item: { name: string | null; weight: number | null; quantity: number | null; is_fragile: boolean | null }): string {
  const count = item.quantity && item.quantity > 1 ? `${item.quantity} × ` : ''
  return `${count}${item.name ?? 'Parcel'}${item.weight !== null ? `, ${item.weight} kg` : ''}${item.is_fragile ? ', fragile' : ''}`
}

/** An order the courier holds: both ends with who to meet, and the next step; never the price or the PIN. */
function orderCard(frame: CourierFrame, order: Order): Html {
  const s = order.shipment
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null)
  const phone = (value: unknown) => (text(value) ? html` · <a href="tel:${text(value)}">${text(value)}</a>` : '')
  return html`<section class="card order" aria-labelledby="order-${order.id}-heading" id="order-${order.id}">
<h2 id="order-${order.id}-heading">${STATUS_LINES[order.status] ?? order.status}</h2><p class="small">Order ${order.id} · <span class="status">${order.status}</span></p><dl>
<dt>Pick up at</dt><dd>${text(s.pickup_address) ?? 'the sender\'s address'}${text(s.pickup_state) ? html`, ${text(s.pickup_state)}` : ''}${text(s.sender_name) ? html`<br>${text(s.sender_name)}` : ''}${phone(s.sender_phone)}</dd>
<dt>Deliver to</dt><dd>${text(s.dropoff_address) ?? ''}${text(s.dropoff_state) ? html`, ${text(s.dropoff_state)}` : ''}</dd>
<dt>Recipient</dt><dd>${text(s.recipient_name) ?? ''}${phone(s.recipient_phone)}${phone(s.alternate_phone)}</dd>
<dt>Item</dt><dd>${itemText(itemOf({ name: s.item_name, weight: s.weight, quantity: s.quantity, is_fragile: s.is_fragile }))}</dd></dl>
${actionsOf(frame, order)}</section>`
}

function actionsOf(frame: CourierFrame, order: Order): Html {
  const base = `/courier/orders/${order.id}`
  const fail = html`<details><summary>Cannot deliver?</summary>${formOf(frame, `${base}/fail`, html`${field({ name: 'reason', label: 'What went wrong', required: true, attrs: html` maxlength="${REASON_MAX_LENGTH}"` })}<button type="submit" class="danger">Mark as failed</button>`, { label: 'Fail the delivery' })}</details>`
  switch (order.status) {
    case 'assigned':
      return html`${formOf(frame, `${base}/pickup`, html`<button type="submit">Picked up</button>`, { label: 'Picked up' })}`
    case 'picked_up': {
      const pin = order.deliveryPin !== null
      const photo = photoRequired(order)
      return html`${formOf(frame, `${base}/deliver`, html`${pin ? field({ name: 'pin', label: 'PIN from the recipient', required: true, attrs: html` inputmode="numeric" pattern="[0-9]{4}" maxlength="4" autocomplete="off"` }) : ''}
<div class="field"><label for="field-photo">Photo of the delivery${photo ? '' : ' (optional)'}</label>
<input id="field-photo" name="photo" type="file" accept="image/*" capture="environment"${photo ? html` required` : ''}><p class="small">JPEG or PNG, at most ${PHOTO_MAX_BYTES / 1024 / 1024} MB.</p></div>
<button type="submit">Deliver</button>`, { multipart: true, label: 'Deliver' })}${fail}`
    }
    case 'failed':
      return html`${formOf(frame, `${base}/return`, html`<button type="submit">Returned to the sender</button>`, { label: 'Returned to the sender' })}`
    default:
      return html``
  }
}

export const COURIER_CSS = `
body{font:17px/1.45 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f3f4f6}
header{background:#12324a;color:#fff;padding:.5rem .8rem;display:flex;gap:.6rem;align-items:center}
header p{margin:0}.brand{font-weight:700}.who{margin-left:auto;text-align:right;line-height:1.2}header form{margin:0}
main{max-width:28rem;margin:0 auto;padding:.2rem .8rem 2rem}h1{font-size:1.3rem}h2{font-size:1.1rem;margin:.2rem 0 .4rem}
.card{background:#fff;border-radius:.6rem;padding:.7rem .9rem;margin:.8rem 0;box-shadow:0 1px 2px #0002}
.offer{border:3px solid #f0a500}dl{margin:.3rem 0}dt{font-weight:600;font-size:.85rem;color:#4a5560}dd{margin:0 0 .4rem}
form{margin:.5rem 0}.field{margin:.5rem 0}.field label{display:block;font-weight:600}
input,button{font:inherit;box-sizing:border-box}input[type=text],input[type=tel],input:not([type]){width:100%;padding:.55rem;border:1px solid #9aa4ae;border-radius:.4rem}
button{width:100%;padding:.75rem;border:0;border-radius:.5rem;background:#1f6f43;color:#fff;font-weight:700;cursor:pointer}
button.quiet{background:#e2e6ea;color:#1b1f24}button.danger{background:#b00020}header button{width:auto;padding:.35rem .6rem}
.actions{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}.actions form{margin:0}
.flash{padding:.6rem;border-radius:.4rem}.flash.ok{background:#e3f4e8}.flash.error{background:#fde7ea}
.small{font-size:.85rem;color:#4a5560}.invalid input{border:2px solid #b00020}.error{color:#b00020;margin:.2rem 0}
summary{cursor:pointer;margin:.6rem 0;color:#4a5560}:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
`

/**
 * The app's one script: the browser's position to /courier/location at most every 5 s while
 * the courier is on shift or carrying an order, and a look at /courier/state every 5 s that
 * reloads the page when an offer or an order changed.
 */
export const COURIER_JS = `(() => {
  'use strict'
  const body = document.body
  const csrf = body.dataset.csrf || ''
  const status = document.getElementById('location-status')
  const EVERY_MS = 5000
  let latest = null
  let lastSent = 0
  let sending = false
  const say = (text) => { if (status) status.textContent = text }
  const send = () => {
    if (!latest || sending || Date.now() - lastSent < EVERY_MS) return
    sending = true
    lastSent = Date.now()
    const fix = new URLSearchParams({ _csrf: csrf, latitude: String(latest.coords.latitude), longitude: String(latest.coords.longitude) })
    if (Number.isFinite(latest.coords.accuracy)) fix.set('accuracy_m', String(Math.round(latest.coords.accuracy)))
    fetch('/courier/location', { method: 'POST', body: fix, credentials: 'same-origin' })
      .then((response) => say(response.ok ? 'Position shared at ' + new Date().toLocaleTimeString() : 'Position not shared (' + response.status + ')'))
      .catch(() => say('Position not shared: no connection'))
      .finally(() => { sending = false })
  }
  if (body.dataset.locate === 'on') {
    if ('geolocation' in navigator) {
      navigator.geolocation.watchPosition((position) => { latest = position; send() },
        (error) => say('Your position is not available: ' + error.message + '. Allow location for this site.'),
        { enableHighAccuracy: true, maximumAge: EVERY_MS, timeout: 30000 })
      setInterval(send, EVERY_MS)
    } else say('This browser cannot share your position.')
  }
  setInterval(() => {
    fetch('/courier/state', { credentials: 'same-origin', cache: 'no-store' })
      .then((response) => {
        if (response.status === 401) location.reload()
        return response.ok ? response.json() : null
      })
      .then((now) => { if (now && now.state !== body.dataset.state) location.reload() })
      .catch(() => undefined)
  }, EVERY_MS)
})()
`
