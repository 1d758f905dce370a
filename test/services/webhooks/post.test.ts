import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { Agent } from 'undici'
import { postSigned } from '../../../services/webhook-sender/post.js'

// One POST of a signed delivery (services/webhook-sender/post.ts) against a real local receiver:
// what the receiver answered, what counts as no answer, and that the connection stays usable.

const TIMEOUT_MS = 300

async function receiver(t: Test, respond: (request: IncomingMessage, response: ServerResponse) => void) {
  const received: { headers: IncomingMessage['headers']; body: string }[] = []
  let connections = 0
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8') })
      respond(request, response)
    })
  })
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 10_000 })
  t.teardown(async () => {
    await dispatcher.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks?tenant=1`)
  const post = (body = '{"id":"evt_1"}') => postSigned(dispatcher, { url, body, headers: { 'webhook-id': 'evt_1', 'content-type': 'application/json' } }, TIMEOUT_MS)
  return { post, received, connections: () => connections }
}

t.test('a 2xx succeeds, with the body and headers sent as given, to the path and query of the URL', async (t) => {
  let path = ''
  const { post, received } = await receiver(t, (request, response) => {
    path = request.url ?? ''
    response.writeHead(204).end()
  })
  t.same(await post('{"id":"evt_1","data":{}}'), { status: 204, error: null })
  t.equal(path, '/hooks?tenant=1')
  t.equal(received[0]?.body, '{"id":"evt_1","data":{}}')
  t.equal(received[0]?.headers['webhook-id'], 'evt_1')
  t.equal(received[0]?.headers['content-type'], 'application/json')
})

t.test('anything else is a failure naming the status; a redirect is not followed', async (t) => {
  const { post, received } = await receiver(t, (request, response) => {
    if (request.url?.startsWith('/hooks')) response.writeHead(302, { location: '/elsewhere' }).end()
    else response.writeHead(204).end()
  })
  t.same(await post(), { status: 302, error: 'the endpoint answered 302' })
  t.equal(received.length, 1, 'the Location was never requested')
})

t.test('an informational answer is not the answer', async (t) => {
  const { post } = await receiver(t, (_request, response) => {
    response.writeEarlyHints({ link: '</style.css>; rel=preload' })
    response.writeHead(200).end('ok')
  })
  t.same(await post(), { status: 200, error: null })
})

t.test('a long answer: the status stands, and the next request is sent all the same', async (t) => {
  const { post, received } = await receiver(t, (_request, response) => response.writeHead(200).end('x'.repeat(64 * 1024)))
  t.same(await post(), { status: 200, error: null })
  t.same(await post(), { status: 200, error: null })
  t.equal(received.length, 2)
})

t.test('short answers keep the connection for the next request', async (t) => {
  const { post, connections } = await receiver(t, (_request, response) => response.writeHead(200).end('{"ok":true}'))
  for (let i = 0; i < 20; i++) t.same(await post(), { status: 200, error: null })
  // undici opens a second one while the first is checked before its first reuse; then no more.
  t.ok(connections() <= 2, `${connections()} connections for twenty requests`)
})

t.test('no answer within the timeout: a failure that says so', async (t) => {
  const { post, received } = await receiver(t, () => {})
  const answer = await post()
  t.equal(answer.status, null)
  t.match(answer.error, /timeout/)
  t.equal(received.length, 1, 'the request did reach the receiver')
})

t.test('a status in time, then a body that never ends: the status stands', async (t) => {
  const { post } = await receiver(t, (_request, response) => {
    response.writeHead(200, { 'content-length': '100' })
    response.write('{"partial":')
  })
  t.same(await post(), { status: 200, error: null })
})

t.test('nobody listening: a failure with the connection error', async (t) => {
  const dispatcher = new Agent({ connections: 1 })
  t.teardown(() => dispatcher.destroy())
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
  const answer = await postSigned(dispatcher, { url: new URL(`http://127.0.0.1:${port}/`), body: '{}', headers: {} }, TIMEOUT_MS)
  t.equal(answer.status, null)
  t.match(answer.error, /ECONNREFUSED/)
})
