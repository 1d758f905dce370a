import type { FastifyInstance } from 'fastify'
import type { ConsoleDeps } from '../deps.js'
import businessAccountRoutes from './business-account.js'
import businessIntegrationRoutes from './business-integration.js'
import businessOrderRoutes from './business-orders.js'

/** The pages of a business user (DESIGN 12); the caller has checked the role. */
export default async function businessRoutes(app: FastifyInstance, deps: ConsoleDeps) {
  await app.register(businessAccountRoutes, deps)
  await app.register(businessOrderRoutes, deps)
  await app.register(businessIntegrationRoutes, deps)
}
