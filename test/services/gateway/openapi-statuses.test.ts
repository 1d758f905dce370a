import type { HTTPMethods } from 'fastify'
import t from 'tap'
import { API_KEY_SCOPES } from '../../../shared/db/api-keys.js'
import { seedAccount } from '../../helpers/accounts.js'
import { onShift } from '../../helpers/couriers.js'
import { bearer, startStack } from '../../helpers/stack.js'

type Operation = { security?: Array<Record<string, unknown>>; parameters?: Array<{ in: string }>; responses: Record<string, unknown> }

const BODY_LIMIT = 4096

/*
 * /docs lists every status a route can answer. The refusals a route gives by its kind, not by its
 * own logic, are provoked on every operation of the served document: no key (401), a query
 * parameter it does not take, malformed JSON, a text body and one over the limit. The stack's
 * response check turns any status the document does not list into a 500, so each must come back
 * as itself.
 */
t.test('every operation documents, and answers, the refusals of its kind', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false, env: { BODY_LIMIT_BYTES: String(BODY_LIMIT) } })
  const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
  const { apiKey } = await seedAccount(db.sql, { scopes: [...API_KEY_SCOPES] })
  const rider = await onShift(gateway, db.sql, 'Refusals Rider', { lat: 6.45, lng: 3.4 }, { offline: true })

  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase() as HTTPMethods, path, operation })))
  for (const { method, path, operation } of operations) {
    const name = `${method} ${path}`
    const documents = (status: number) => Object.hasOwn(operation.responses, String(status))
    const security = operation.security ?? document.security
    const auth = security.some((requirement: object) => 'courierToken' in requirement) ? rider.auth : security.length > 0 ? bearer(apiKey) : {}
    // Placeholder ids: every refusal here comes before the id is looked at.
    const url = `/v2${path.replace(/\{\w+\}/g, 'x')}`
    const send = (request: { query?: string; type?: string; body?: string; headers?: Record<string, string> }) =>
      gateway.inject({ method, url: url + (request.query ?? ''), headers: { ...auth, ...(request.type && { 'content-type': request.type }), ...request.headers }, payload: request.body })

    t.ok(documents(503), `${name} documents 503`)
    if (security.length > 0) {
      t.ok(documents(401) && documents(429), `${name} documents 401, and 429 for its key's rate limit`)
      t.equal((await send({ headers: { authorization: 'Bearer nonsense' } })).statusCode, 401, `${name} answers 401 without a valid credential`)
    }
    if (operation.parameters?.some((parameter) => parameter.in === 'query')) t.ok(documents(400), `${name} takes query parameters and documents their 400`)
    // (Not on the event stream, which would stay open.)
    if (!JSON.stringify(operation.responses).includes('text/event-stream')) {
      const unknownQuery = await send({ query: '?no_such_parameter=1' })
      t.not(unknownQuery.statusCode, 500, `${name} with an unknown query parameter answers a documented status: ${unknownQuery.body}`)
    }

    if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) {
      t.ok(documents(400) && documents(413) && documents(415), `${name} can carry a body and documents 400, 413 and 415`)
      const malformed = await send({ type: 'application/json', body: '{' })
      t.equal(malformed.statusCode, 400, `${name} answers malformed JSON 400: ${malformed.body}`)
      const text = await send({ type: 'text/plain', body: 'hello' })
      t.equal(text.statusCode, 415, `${name} answers a text body 415: ${text.body}`)
      const large = await send({ type: 'application/json', body: JSON.stringify({ padding: 'x'.repeat(BODY_LIMIT) }) })
      t.equal(large.statusCode, 413, `${name} answers a body over the limit 413: ${large.body}`)
    }
  }
})
