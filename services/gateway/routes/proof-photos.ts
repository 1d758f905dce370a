import type { FastifyInstance } from 'fastify'
import { findOrder } from '../../../shared/db/orders.js'
import type { Sql } from '../../../shared/db/sql.js'
import { ApiError } from '../../../shared/errors/api-error.js'
import { isOrderId } from '../../../shared/ids.js'
import { orderNotFound } from '../../../shared/orders/refusals.js'
import type { photoLinks, PhotoStore } from '../../../shared/storage/photos.js'

interface PhotoRouteOptions {
  sql: Sql
  photos: PhotoStore
  links: ReturnType<typeof photoLinks>
  publicBaseUrl: string
  ttlS: number
}

/**
 * A delivery photo for its business (DESIGN 14): `photo_url` takes the business's key and answers
 * a link any browser can open for PHOTO_LINK_TTL_S (15 minutes): the store's presigned link (S3),
 * or the gateway's own signed link (a local directory).
 */
export async function businessPhotoRoutes(app: FastifyInstance, { sql, photos, links, publicBaseUrl, ttlS }: PhotoRouteOptions) {
  app.get<{ Params: { order_id: string } }>('/business/orders/:order_id/proof/photo', async (request, reply) => {
    const { order_id: orderId } = request.params
    const order = isOrderId(orderId) ? await findOrder(sql, orderId, request.caller) : null
    if (!order) throw orderNotFound(orderId)
    if (!order.photoKey) throw new ApiError(404, `No delivery photo for ${orderId}`)
    const expiresAt = Math.floor(Date.now() / 1000) + ttlS
    const url = (await photos.presign(order.photoKey, ttlS)) ?? `${publicBaseUrl}/v2/proof-photos/${links.path(order.photoKey, expiresAt)}`
    return reply.header('cache-control', 'no-store').send({ url, expires_at: new Date(expiresAt * 1000).toISOString() })
  })
}

/** The gateway's signed photo links: no key, the link is the permission, until it expires. */
export async function photoLinkRoutes(app: FastifyInstance, { photos, links }: Pick<PhotoRouteOptions, 'photos' | 'links'>) {
  app.get<{ Params: { key: string; expires: string; signature: string } }>('/:key/:expires/:signature', async (request, reply) => {
    const link = links.read(request.params, Date.now())
    if (link.kind === 'expired') throw new ApiError(410, 'This photo link has expired: GET the order\'s photo_url again for a new one')
    const photo = link.kind === 'valid' ? await photos.get(link.key) : null
    if (!photo) throw new ApiError(404, 'Photo was not found')
    // Bytes a courier uploaded, shown inline: the browser takes them for the type their magic bytes proved, never sniffs further.
    return reply.header('content-type', photo.contentType).header('x-content-type-options', 'nosniff').header('cache-control', 'private, max-age=60').header('content-disposition', 'inline').send(photo.bytes)
  })
}
