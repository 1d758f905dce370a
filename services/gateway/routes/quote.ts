import type { FastifyInstance } from 'fastify'
import { quoteRequestSchema } from '../../../shared/schemas/quote.js'
import { parseBody } from '../../../shared/schemas/parse.js'
import { pricingFailure, type PricingClient } from '../pricing-client.js'

export default async function quoteRoutes(app: FastifyInstance, { pricing }: { pricing: PricingClient }) {
  app.post('/business/order/cost', async (request, reply) => {
    const quoteRequest = parseBody(quoteRequestSchema, request.body)
    const answer = await pricing.quote(request.caller, quoteRequest)
    if (answer.statusCode !== 200) throw pricingFailure(answer)
    return reply.code(200).type('application/json; charset=utf-8').send(answer.body)
  })
}
