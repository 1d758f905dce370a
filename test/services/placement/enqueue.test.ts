import { createConnection, createServer, type Socket } from 'node:net'
import { Queue } from 'bullmq'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { startPlacementWorker } from '../../../services/placement-worker/worker.js'
import { loadConfig, workerEnv } from '../../../shared/config.js'
import { PLACEMENT_QUEUE } from '../../../shared/placement-queue.js'
import { seedAccount } from '../../helpers/accounts.js'
import { waitFor } from '../../helpers/processes.js'
import { shipment } from '../../helpers/shipments.js'
import { bearer, startStack } from '../../helpers/stack.js'

/**
 * A TCP relay to the shared Redis whose replies can be held back: the gateway's commands still
 * reach Redis, but it hears nothing, as when a network stalls after the job was written.
 */
async function stallableRedis(t: Test, target: URL): Promise<{ url: string; stall: () => void; flow: () => void }> {
  let stalled = false
  const held: [Socket, Buffer][] = []
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = createConnection(Number(target.port || 6379), target.hostname)
    sockets.add(client).add(upstream)
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => (stalled ? held.push([client, chunk]) : client.write(chunk)))
    const end = () => { client.destroy(); upstream.destroy() }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const flow = () => {
    stalled = false
    for (const [socket, chunk] of held.splice(0)) if (!socket.destroyed) socket.write(chunk)
  }
  t.teardown(() => { flow(); for (const socket of sockets) socket.destroy(); server.close() })
  return { url: `redis://127.0.0.1:${port}`, stall: () => { stalled = true }, flow }
}

t.test('an enqueue that times out: never reported not placed while its job may run', async (t) => {
  const sharedRedis = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
  const relay = await stallableRedis(t, new URL(sharedRedis))
  // The gateway reaches Redis through the relay; the worker directly.
  const { gateway, db } = await startStack(t, { worker: false, env: { REDIS_URL: relay.url } })
  const workerConfig = loadConfig(workerEnv, { ...db.env, REDIS_URL: sharedRedis })
  const worker = Fastify({ logger: false })
  await worker.register(startPlacementWorker, { config: workerConfig })
  await worker.ready()
  t.teardown(() => worker.close())
  const connection = new Redis(sharedRedis, { maxRetriesPerRequest: null })
  const queue = new Queue(PLACEMENT_QUEUE, { connection, prefix: db.config.QUEUE_PREFIX })
  t.teardown(async () => { await queue.close(); connection.disconnect() })

  const { sql } = db
  const place = (apiKey: string, key: string) =>
    gateway.inject({ method: 'POST', url: '/v2/business/order', headers: { ...bearer(apiKey), 'idempotency-key': key }, payload: [shipment()] })
  const debits = async (businessId: string) => (await sql`select count(*)::int as n from ledger_entries where business_id = ${businessId} and kind = 'debit'`)[0].n
  // The relay is up: a first placement proves the path before the faults.
  const warm = await seedAccount(sql, { balance: 100000 })
  t.equal((await place(warm.apiKey, 'warm')).statusCode, 201)

  t.test('the job was written and ran, its reply lost: the answer is the placement, not a 503', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    relay.stall()
    const answer = await place(account.apiKey, 'ran-anyway')
    relay.flow()
    t.equal(answer.statusCode, 201, answer.body)
    t.equal(await debits(account.businessId), 1)
  })

  t.test('the job was written but did not run: 503 not processed with its id, the late job moves no money, the key places anew', async (t) => {
    const account = await seedAccount(sql, { balance: 100000 })
    await queue.pause()
    relay.stall()
    const answer = await place(account.apiKey, 'not-yet')
    relay.flow()
    t.equal(answer.statusCode, 503)
    t.equal(answer.json().message, 'Placement was not processed; nothing was charged')
    const id = answer.json().placement_id
    t.match(id, /^[0-9a-f-]{36}$/)
    t.ok(await queue.getJob(id), 'its job is in Redis all the same')

    await queue.resume()
    t.ok(await waitFor(async () => (await queue.getJob(id)) === undefined, 10000), 'the late job ran and left')
    t.equal(await debits(account.businessId), 0, 'the late job moved no money')
    const [row] = await sql`select status, outcome from placements where id = ${id}`
    t.same(row, { status: 'failed', outcome: { kind: 'not_processed' } })

    const retry = await place(account.apiKey, 'not-yet')
    t.equal(retry.statusCode, 201, 'the key was freed')
    t.equal(await debits(account.businessId), 1)
  })
})
