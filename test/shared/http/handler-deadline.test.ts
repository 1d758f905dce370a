import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyError } from 'fastify'
import t from 'tap'
import { request } from 'undici'
import handlerDeadline, { sweepEveryMs } from '../../../shared/http/handler-deadline.js'

// REQUEST_TIMEOUT_MS on answering (shared/http/handler-deadline.ts): a handler that waits past it
// is answered with FST_ERR_HANDLER_TIMEOUT, which each service's error handler makes its 503; an
// answer already begun is cut; an event stream (a hijacked reply) and answered requests are left alone.
const TIMEOUT_MS = 150

async function app() {
  const server = Fastify()
  await server.register(handlerDeadline, { timeoutMs: TIMEOUT_MS })
  server.setErrorHandler((err: FastifyError, _request, reply) => reply.code(err.code === 'FST_ERR_HANDLER_TIMEOUT' ? 503 : 500).send({ code: err.code }))
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  server.get('/slow', async () => {
    await held
    return { late: true }
  })
  server.get('/fast', async () => ({ fast: true }))
  server.get('/begun', async (_request, reply) => {
    reply.raw.writeHead(200, { 'content-type': 'text/plain' })
    reply.raw.write('begun ')
    await held
    return reply
  })
  server.get('/stream', async (_request, reply) => {
    reply.hijack()
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' })
    let sent = 0
    const timer = setInterval(() => {
      reply.raw.write(`data: ${++sent}\n\n`)
      if (sent === 5) {
        clearInterval(timer)
        reply.raw.end()
      }
    }, TIMEOUT_MS / 2)
  })
  await server.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    release()
    await server.close()
  })
  return { url: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`, release }
}

t.test('the sweep runs a twentieth of the bound, within 5 ms and 1 s', async (t) => {
  t.equal(sweepEveryMs(40_000), 1000)
  t.equal(sweepEveryMs(800), 40)
  t.equal(sweepEveryMs(20), 5)
})

t.test('a handler that waits past the bound is answered FST_ERR_HANDLER_TIMEOUT; the others are not touched', async (t) => {
  const { url } = await app()
  const [slow, fast] = await Promise.all([request(`${url}/slow`), request(`${url}/fast`)])
  t.equal(slow.statusCode, 503)
  t.same(await slow.body.json(), { code: 'FST_ERR_HANDLER_TIMEOUT' })
  t.equal(fast.statusCode, 200)
  t.same(await fast.body.json(), { fast: true })
})

t.test('an event stream outlives the bound and ends when its route ends it', async (t) => {
  const { url } = await app()
  const response = await request(`${url}/stream`)
  t.equal(response.statusCode, 200)
  const text = await response.body.text()
  t.same(text.trim().split('\n\n'), ['data: 1', 'data: 2', 'data: 3', 'data: 4', 'data: 5'], 'every event arrived, well past the bound')
})

t.test('an answer already begun when the bound passes is cut, not answered twice', async (t) => {
  const { url } = await app()
  const response = await request(`${url}/begun`)
  t.equal(response.statusCode, 200, 'the head went out before the bound')
  const read = response.body.text().then((text) => ({ text, error: null }), (error: Error) => ({ text: null, error }))
  const outcome = await read
  t.ok(outcome.error, 'the connection was cut after the first bytes')
})
