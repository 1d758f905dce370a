import type { FastifyInstance } from 'fastify'
import { lastFix } from '../../../shared/couriers/positions.js'
import { findOrderByTrackingToken } from '../../../shared/db/orders.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { etaOf, liveView } from '../../../shared/orders/resource.js'
import type { ConsoleDeps } from '../deps.js'
import { trackingPage } from '../pages/tracking.js'
import { tileOrigin } from '../pages/tracking-map.js'

// Tracking pages end this long after the order came to rest (DESIGN 14).
const KEPT_AFTER_REST_MS = 7 * 24 * 3600 * 1000
const AT_REST = new Set(['delivered', 'returned', 'cancelled'])
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}$/

/** `GET /t/{token}`: the recipient's page, without a login; 404 for an unknown, erased or long-finished order. */
export default async function trackingRoutes(app: FastifyInstance, { sql, redis, config }: ConsoleDeps) {
  const tiles = config.TRACKING_MAP_TILES_URL ? { url: config.TRACKING_MAP_TILES_URL, attribution: config.TRACKING_MAP_ATTRIBUTION } : null
  // The console's policy as helmet set it, with the tile server's images allowed (nothing else of it).
  const allowTiles = (policy: unknown) => tiles && typeof policy === 'string' ? policy.replace(/img-src ([^;]*)/, `img-src $1 ${tileOrigin(tiles)}`) : null

  app.get<{ Params: { token: string } }>('/t/:token', async (request, reply) => {
    reply.header('x-robots-tag', 'noindex, nofollow').header('referrer-policy', 'no-referrer')
    const { token } = request.params
    const order = TOKEN_SHAPE.test(token) ? await findOrderByTrackingToken(sql, token) : null
    if (!order || (AT_REST.has(order.status) && Date.now() - order.updatedAt.getTime() > KEPT_AFTER_REST_MS)) {
      return reply.code(404).type('text/html; charset=utf-8').send('<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Not found</title></head><body><p>This tracking link is not valid, or has ended.</p></body></html>')
    }
    const active = order.status === 'assigned' || order.status === 'picked_up'
    const courierAt = active && order.courierId ? await lastFix(redis, config.QUEUE_PREFIX, order.courierId).catch(() => null) : null
    const rates = await getPlatformRates(sql)
    const eta = etaOf(order, liveView(courierAt, rates))
    const csp = allowTiles(reply.getHeader('content-security-policy'))
    if (csp) reply.header('content-security-policy', csp)
    return reply.type('text/html; charset=utf-8').send(trackingPage({ order, courierAt, eta, tiles, timeZone: config.TRACKING_TIME_ZONE, now: new Date() }))
  })
}
