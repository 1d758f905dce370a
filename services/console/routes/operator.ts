import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from '../deps.js'
import operatorAccountRoutes from './operator-accounts.js'
import operatorCourierRoutes from './operator-couriers.js'
import operatorOrderRoutes from './operator-orders.js'
import operatorPricingRoutes from './operator-pricing.js'

/** The pages of an operator (DESIGN 12); the caller has checked the role. */
export default async function operatorRoutes(app: FastifyInstance, deps: ConsoleDeps) {
  await app.register(operatorAccountRoutes, deps)
  await app.register(operatorPricingRoutes, deps)
  await app.register(operatorOrderRoutes, deps)
  await app.register(operatorCourierRoutes, deps)
}
