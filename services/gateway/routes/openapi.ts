import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { openApiDocument } from '../openapi/document.js'

/** The reference page's mark (tab icon and logo), so no framework's branding stands for the API. */
export const REFERENCE_MARK_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f6f50"/>' +
  '<path d="M16 6a8 8 0 0 0-8 8c0 6 8 12 8 12s8-6 8-12a8 8 0 0 0-8-8zm0 11a3 3 0 1 1 0-6 3 3 0 0 1 0 6z" fill="#fff"/></svg>'

/**
 * The document at /openapi.json, and an API reference rendered from it by Swagger UI at /docs
 * (its assets are served from node_modules, so the page works without internet). Both are
 * public: no key is needed to read how to use one. The page is titled with the API's name and
 * laid out without Swagger UI's top bar, so it opens on the document's own walk-through.
 */
export default async function openApiRoutes(app: FastifyInstance, { publicBaseUrl }: { publicBaseUrl: string }) {
  const document = openApiDocument(publicBaseUrl)
  const text = JSON.stringify(document)
  app.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(text))

  // @fastify/swagger types documents as OpenAPI 3.0; it serves this 3.1 one as the JSON it is.
  await app.register(swagger, { mode: 'static', specification: { document: JSON.parse(text) } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { layout: 'BaseLayout', docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0, tryItOutEnabled: false },
    theme: {
      title: `${document.info.title}: reference`,
      favicon: [{ filename: 'mark.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: REFERENCE_MARK_SVG }],
    },
    logo: { type: 'image/svg+xml', content: REFERENCE_MARK_SVG },
    staticCSP: true,
    // Swagger UI's policy asks the browser to move every asset to https, which leaves a blank page
    // wherever the gateway answers plain http past this machine (a laptop's LAN address, a
    // staging host): only an https deployment keeps it.
    transformStaticCSP: (header) => (new URL(publicBaseUrl).protocol === 'https:' ? header : header.replace(/\s*upgrade-insecure-requests;?/, '')),
  })
}
