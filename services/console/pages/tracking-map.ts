import type { CourierFix, Point } from '../../../shared/courier.js'
import type { Order } from '../../../shared/db/orders.js'
import { html, type Html } from '../html.js'

// The tracking page's map (DESIGN 14): the pickup, the dropoff and the courier on a plain SVG that
// needs no internet, or the same markers over slippy-map tiles from a configured server
// (`TRACKING_MAP_TILES_URL`, `{z}/{x}/{y}` as OpenStreetMap's), placed in Web Mercator.

export interface TileSource {
  /** `https://tile.example/{z}/{x}/{y}.png` */
  url: string
  attribution: string
}

const [WIDTH, HEIGHT, PAD, TILE] = [320, 220, 30, 256]
const MAX_ZOOM = 17

type Marker = [label: string, at: Point, colour: string]
/** A tile and where its top-left corner falls in the box. */
type Tile = [z: number, x: number, y: number, left: number, top: number]

interface View {
  tiles: Tile[]
  place(p: Point): [number, number]
}

function markersOf(order: Order, courierAt: CourierFix | null): Marker[] {
  const markers: Marker[] = []
  if (order.pickupLat !== null && order.pickupLng !== null) markers.push(['Pickup', { lat: order.pickupLat, lng: order.pickupLng }, '#2f6f3e'])
  if (order.dropoffLat !== null && order.dropoffLng !== null) markers.push(['You', { lat: order.dropoffLat, lng: order.dropoffLng }, '#a33b20'])
  if (courierAt) markers.push(['Courier', { lat: courierAt.latitude, lng: courierAt.longitude }, '#1f4fa3'])
  return markers
}

export function trackingMap(order: Order, courierAt: CourierFix | null, tiles: TileSource | null): Html {
  const markers = markersOf(order, courierAt)
  if (markers.length === 0) return html``
  const view = tiles ? mercatorView(markers) : plainView(markers)
  const dots = markers.map(([label, at, colour]) => {
    const [x, y] = view.place(at)
    return html`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="7" fill="${colour}" stroke="#fff" stroke-width="2"></circle><text x="${(x + 10).toFixed(1)}" y="${(y + 4).toFixed(1)}" font-size="12" paint-order="stroke" stroke="#fff" stroke-width="3">${label}</text>`
  })
  const background = tiles ? view.tiles.map(([z, tx, ty, x, y]) => html`<image href="${tileUrl(tiles.url, z, tx, ty)}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${TILE}" height="${TILE}"></image>`) : ''
  return html`<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="Map of the pickup, your address and the courier">
${background}${dots}
</svg>${tiles ? html`<p><small>${tiles.attribution}</small></p>` : ''}`
}

/** The origin the page must allow images from (Content-Security-Policy `img-src`). */
export function tileOrigin(tiles: TileSource): string {
  return new URL(tiles.url.replace(/\{[xyz]\}/g, '0')).origin
}

function tileUrl(template: string, z: number, x: number, y: number): string {
  return template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y))
}

/** Markers scaled into the box, without a projection: enough for a few kilometres of city. */
function plainView(markers: Marker[]): View {
  const lats = markers.map(([, p]) => p.lat)
  const lngs = markers.map(([, p]) => p.lng)
  const span = Math.max(Math.max(...lats) - Math.min(...lats), Math.max(...lngs) - Math.min(...lngs), 0.005)
  return {
    tiles: [],
    place: (p: Point): [number, number] => [
      PAD + ((p.lng - Math.min(...lngs)) / span) * (WIDTH - 2 * PAD),
      HEIGHT - PAD - ((p.lat - Math.min(...lats)) / span) * (HEIGHT - 2 * PAD),
    ],
  }
}

/** World pixel of a point at zoom `z` (Web Mercator, 256-pixel tiles). */
function worldPixel(p: Point, z: number): [number, number] {
  const size = TILE * 2 ** z
  const lat = (Math.max(-85.05, Math.min(85.05, p.lat)) * Math.PI) / 180
  return [((p.lng + 180) / 360) * size, ((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * size]
}

/** The closest zoom that shows every marker, centred on them, and the tiles under the box. */
function mercatorView(markers: Marker[]): View {
  let z = MAX_ZOOM
  for (; z > 1; z--) {
    const pixels = markers.map(([, p]) => worldPixel(p, z))
    const xs = pixels.map(([x]) => x)
    const ys = pixels.map(([, y]) => y)
    if (Math.max(...xs) - Math.min(...xs) <= WIDTH - 2 * PAD && Math.max(...ys) - Math.min(...ys) <= HEIGHT - 2 * PAD) break
  }
  const pixels = markers.map(([, p]) => worldPixel(p, z))
  const left = (Math.min(...pixels.map(([x]) => x)) + Math.max(...pixels.map(([x]) => x))) / 2 - WIDTH / 2
  const top = (Math.min(...pixels.map(([, y]) => y)) + Math.max(...pixels.map(([, y]) => y))) / 2 - HEIGHT / 2
  const tiles: Tile[] = []
  const count = 2 ** z
  for (let ty = Math.floor(top / TILE); ty <= Math.floor((top + HEIGHT) / TILE); ty++) {
    if (ty < 0 || ty >= count) continue
    for (let tx = Math.floor(left / TILE); tx <= Math.floor((left + WIDTH) / TILE); tx++) {
      tiles.push([z, ((tx % count) + count) % count, ty, tx * TILE - left, ty * TILE - top])
    }
  }
  return { tiles, place: (p: Point): [number, number] => { const [x, y] = worldPixel(p, z); return [x - left, y - top] } }
}
