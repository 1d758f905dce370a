import type { FastifyInstance } from 'fastify'
import type { Quoter } from '../../../shared/pricing/quoter.js'

/** `GET /internal/catalog/:businessId` → the catalog of docs/contracts.md; `rate_cards: []` without a card. */
export default async function catalogRoutes(app: FastifyInstance, { quoter }: { quoter: Quoter }) {
  app.get<{ Params: { businessId: string } }>('/internal/catalog/:businessId', async (request) => quoter.catalog(request.params.businessId))
}
