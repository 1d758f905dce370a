import type { FastifyInstance } from 'fastify'
import { pricingFailure, type PricingClient } from '../pricing-client.js'

export default async function rateCardRoutes(app: FastifyInstance, { pricing }: { pricing: PricingClient }) {
  app.get('/business/rate-cards', async (request, reply) => {
    const answer = await pricing.catalog(request.caller.businessId)
    if (answer.statusCode !== 200) throw pricingFailure(answer)
    return reply.code(200).type('application/json; charset=utf-8').send(answer.body)
  })
}
