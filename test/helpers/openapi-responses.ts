import { mkdtempSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { validate } from '@hyperjump/json-schema/openapi-3-1'
import type { FastifyInstance } from 'fastify'
import { openApiDocument } from '../../services/gateway/openapi/document.js'

/*
 * Every answer the gateway gives in the HTTP tests is checked against the OpenAPI document by
 * @hyperjump/json-schema, a validator that reads OpenAPI 3.1 documents (their $refs and JSON
 * Schema dialect) as they are. An answer the document does not describe, by status or by body,
 * is turned into a 500 naming the mismatch, so the test that received it fails where it looks.
 */

interface ResponseObject {
  $ref?: string
  content?: Record<string, { schema: unknown }>
}
type Operation = { responses: Record<string, ResponseObject> }

const document = openApiDocument('http://localhost:3000')
export const documentUrl = (() => {
  // The validator knows a file as an OpenAPI document by its name ending in openapi.json.
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'courier-openapi-')), 'courier.openapi.json')
  writeFileSync(file, JSON.stringify(document))
  return pathToFileURL(file).href
})()

// A JSON pointer inside a URI fragment: `~` and `/` escaped as JSON pointers say, the rest (`{`, `}`) as URIs do.
const pointer = (...parts: string[]) => parts.map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')

const routes = Object.entries(document.paths as Record<string, Record<string, Operation>>).map(([template, operations]) => ({
  template,
  operations,
  pattern: new RegExp(`^/v2${template.replace(/\{\w+\}/g, '[^/]+')}$`),
  literal: !template.includes('{'),
}))
// A literal path wins over a template that also matches it.
routes.sort((a, b) => Number(b.literal) - Number(a.literal))

const validators = new Map<string, ReturnType<typeof validate>>()

/** What is wrong with this answer by the document: empty when nothing is, null when the document has no such operation. */
export async function responseProblems(method: string, url: string, statusCode: number, body: string): Promise<string[] | null> {
  const urlPath = url.split('?')[0]
  const route = routes.find((candidate) => candidate.pattern.test(urlPath))
  const operation = route?.operations[method.toLowerCase()]
  if (!route || !operation) return null
  const declared = operation.responses[String(statusCode)]
  if (!declared) return [`status ${statusCode} is not documented for ${method} ${route.template}`]
  const responsePointer = declared.$ref
    ? declared.$ref.slice(1)
    : `/${pointer('paths', route.template, method.toLowerCase(), 'responses', String(statusCode))}`
  const content = declared.$ref ? { 'application/json': true } : declared.content
  if (!content) return body.length === 0 ? [] : [`${method} ${route.template} ${statusCode} has a body the document does not describe`]
  const schemaUrl = `${documentUrl}#${responsePointer}/content/application~1json/schema`
  let check = validators.get(schemaUrl)
  if (!check) validators.set(schemaUrl, (check = validate(schemaUrl)))
  const output = (await check)(JSON.parse(body), 'BASIC')
  if (output.valid) return []
  return (output.errors ?? []).map((error) => `${method} ${route.template} ${statusCode}: ${error.instanceLocation} fails ${error.absoluteKeywordLocation.split('#')[1]}`)
}

/** Adds the check to a gateway before its routes are registered. */
export function checkResponsesAgainstDocument(gateway: FastifyInstance) {
  gateway.addHook('onSend', async (request, reply, payload) => {
    if (typeof payload !== 'string' && payload !== null && payload !== undefined) return payload
    const problems = await responseProblems(request.method, request.url, reply.statusCode, payload ?? '')
      .catch((err: Error) => [`the check itself failed: ${err.stack}`])
    if (!problems || problems.length === 0) return payload
    reply.code(500).type('application/json')
    return JSON.stringify({ statusCode: 500, message: 'The answer does not match the OpenAPI document', problems, answer: payload })
  })
}
