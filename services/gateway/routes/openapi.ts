import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { openApiDocument } from '../openapi/document.js'

/**
 * The document at /openapi.json, and an API reference rendered from it by Swagger UI at /docs
 * (its assets are served from node_modules, so the page works without internet). Both are
 * public: no key is needed to read how to use one.
 */
export default async function openApiRoutes(app: FastifyInstance, { publicBaseUrl }: { publicBaseUrl: string }) {
  const document = openApiDocument(publicBaseUrl)
  const text = JSON.stringify(document)
  app.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(text))

  // @fastify/swagger types documents as OpenAPI 3.0; it serves this 3.1 one as the JSON it is.
  await app.register(swagger, { mode: 'static', specification: { document: JSON.parse(text) } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
    staticCSP: true,
  })
}
