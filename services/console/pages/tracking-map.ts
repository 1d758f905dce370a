import type { CourierFix, Point } from '../../../shared/courier.js'
import { html, type Html } from '../html.js'

// The tracking page's map (DESIGN 14): the courier's position over slippy-map tiles from a
// configured server (`TRACKING_MAP_TILES_URL`, `{z}/{x}/{y}` as OpenStreetMap's), placed in Web
// Mercator. The courier alone: the page shows nothing of the order's addresses, so a forwarded
// link tells no one where the recipient lives (and the tile server learns only the courier's area).

export interface TileSource {
  /** `https://tile.example/{z}/{x}/{y}.png` */
  url: string
  attribution: string
}

const [WIDTH, HEIGHT, TILE] = [320, 220, 256]
/** A few streets around the courier. */
const ZOOM = 15

/** The map of the courier's last fix, centred on it. */
export function trackingMap(courierAt: CourierFix, tiles: TileSource): Html {
  const [cx, cy] = worldPixel({ lat: courierAt.latitude, lng: courierAt.longitude }, ZOOM)
  const [left, top] = [cx - WIDTH / 2, cy - HEIGHT / 2]
  const count = 2 ** ZOOM
  const images: Html[] = []
  for (let ty = Math.floor(top / TILE); ty <= Math.floor((top + HEIGHT) / TILE); ty++) {
    if (ty < 0 || ty >= count) continue
    for (let tx = Math.floor(left / TILE); tx <= Math.floor((left + WIDTH) / TILE); tx++) {
      const url = tileUrl(tiles.url, ZOOM, ((tx % count) + count) % count, ty)
      images.push(html`<image href="${url}" x="${(tx * TILE - left).toFixed(1)}" y="${(ty * TILE - top).toFixed(1)}" width="${TILE}" height="${TILE}"></image>`)
    }
  }
  const [x, y] = [WIDTH / 2, HEIGHT / 2]
  return html`<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="Map of where your courier is">
${images}<circle cx="${x}" cy="${y}" r="7" fill="#1f4fa3" stroke="#fff" stroke-width="2"></circle><text x="${x + 10}" y="${y + 4}" font-size="12" paint-order="stroke" stroke="#fff" stroke-width="3">Courier</text>
</svg><p><small>${tiles.attribution}</small></p>`
}

/** The origin the page must allow images from (Content-Security-Policy `img-src`). */
export function tileOrigin(tiles: TileSource): string {
  return new URL(tiles.url.replace(/\{[xyz]\}/g, '0')).origin
}

function tileUrl(template: string, z: number, x: number, y: number): string {
  return template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y))
}

/** World pixel of a point at zoom `z` (Web Mercator, 256-pixel tiles). */
function worldPixel(p: Point, z: number): [number, number] {
  const size = TILE * 2 ** z
  const lat = (Math.max(-85.05, Math.min(85.05, p.lat)) * Math.PI) / 180
  return [((p.lng + 180) / 360) * size, ((1 - Math.log(Math.tan(lat) + 1 / Math.cos(lat)) / Math.PI) / 2) * size]
}
