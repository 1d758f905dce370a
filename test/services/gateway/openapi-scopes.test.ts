import type { HTTPMethods } from 'fastify'
import t from 'tap'
import { API_KEY_SCOPES } from '../../../shared/db/api-keys.js'
import { seedAccount } from '../../helpers/accounts.js'
import { bearer, startStack } from '../../helpers/stack.js'

type Operation = { description: string; security?: unknown[]; 'x-scopes': string[] }

// What an integrator reads on /docs against what the gateway does: for every operation that takes
// an API key, a key of each scope is let through exactly when the document names that scope.
t.test('every operation refuses (403) exactly the scopes the document does not name', async (t) => {
  const { gateway, db } = await startStack(t, { worker: false })
  const document = (await gateway.inject({ method: 'GET', url: '/openapi.json' })).json()
  const keys = await Promise.all(API_KEY_SCOPES.map(async (scope) => ({ scope, apiKey: (await seedAccount(db.sql, { scopes: [scope], name: `Only ${scope} Ltd` })).apiKey })))

  const operations = Object.entries(document.paths as Record<string, Record<string, Operation>>)
    .flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method: method.toUpperCase() as HTTPMethods, path, operation })))
    .filter(({ operation }) => operation.security?.some((requirement) => Object.hasOwn(requirement as object, 'apiKey')))
  t.equal(operations.length, 19, 'every business operation but the photo link takes an API key')

  for (const { method, path, operation } of operations) {
    const documented = operation['x-scopes']
    t.match(operation.description, new RegExp(`API key scope: ${documented.join(' or ')}\\.$`), `${method} ${path}: the description names the scopes of x-scopes`)
    // Placeholder ids: authorization runs before the id or the body is read.
    const url = `/v2${path.replace(/\{\w+\}/g, 'x')}`
    // fastify serves HEAD beside every GET: it must take the same scopes.
    for (const sent of method === 'GET' ? ['GET', 'HEAD'] as const : [method]) {
      for (const { scope, apiKey } of keys) {
        const response = await gateway.inject({ method: sent, url, headers: bearer(apiKey) })
        const refused = response.statusCode === 403
        t.equal(refused, !documented.includes(scope), `${sent} ${path} with ${scope}: the document ${documented.includes(scope) ? 'accepts' : 'refuses'} it, the gateway answers ${response.statusCode}`)
      }
    }
  }
})
