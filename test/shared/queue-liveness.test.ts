import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import Fastify from 'fastify'
import healthRoutes from '../../shared/http/health.js'
import { observeQueueJobs, watchWorker } from '../../shared/queue-liveness.js'
import { startMetrics } from '../../shared/telemetry/metrics-endpoint.js'
import { useTestDb } from '../helpers/db.js'
import { withDeadline } from '../../shared/deadline.js'
import { startOwnRedis, waitForValue } from '../helpers/processes.js'

// A queue worker that stops taking due jobs (seen after a Redis Cluster failover) answers
// /healthz 503 so it is restarted; an idle one, or one that takes jobs again, stays healthy.
// A worker made with `autorun: false` takes nothing until `run()`: a stuck worker, on demand.
const db = await useTestDb(t)
const connection = new Redis(db.env.REDIS_URL, { maxRetriesPerRequest: null })
t.teardown(() => connection.disconnect())
const STUCK_MS = 1500
// The meter provider goes first, as in a service: instruments are made once, from the provider set then.
const metrics = await startMetrics(0, '127.0.0.1')
const metricsPort = metrics.port
t.teardown(() => metrics.close())

async function watched(t: Test, name: string) {
  const queue = new Queue(name, { connection, prefix: db.env.QUEUE_PREFIX })
  const done: string[] = []
  const worker = new Worker(name, async (job) => { done.push(String(job.id)) }, { connection, prefix: db.env.QUEUE_PREFIX, autorun: false })
  const liveness = watchWorker(worker, queue, STUCK_MS)
  const app = Fastify()
  await app.register(healthRoutes, { sql: db.sql, redis: connection, needsRedis: true, taking: liveness.taking })
  t.teardown(async () => {
    liveness.close()
    await app.close()
    await worker.close()
    await queue.obliterate({ force: true })
    await queue.close()
  })
  const health = async () => (await app.inject({ method: 'GET', url: '/healthz' })).statusCode
  return { queue, worker, done, app, health }
}

t.test('nothing due: healthy however long; jobs due and none started: 503 until it takes them', async (t) => {
  const { queue, worker, done, app, health } = await watched(t, 'liveness-wait')
  const idle = await waitForValue(health, (status) => status !== 200, STUCK_MS * 3, 250)
  t.equal(idle.value, 200, `healthy after ${STUCK_MS * 3} ms with nothing to do`)

  await queue.add('job', {}, { jobId: 'due-1' })
  const stuck = await waitForValue(health, (status) => status === 503, STUCK_MS * 8, 100)
  t.equal(stuck.value, 503, 'a job waits and the worker started none: stuck')
  t.same((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'stuck', reason: 'jobs are due and this worker has started none' })

  void worker.run()
  const back = await waitForValue(health, (status) => status === 200, STUCK_MS * 8, 100)
  t.equal(back.value, 200, 'taking jobs again: healthy')
  t.same(done, ['due-1'], 'the job ran')
})

t.test('a delayed job long past its time counts as due; one not yet due does not', async (t) => {
  const { queue, health } = await watched(t, 'liveness-delayed')
  await queue.add('later', {}, { jobId: 'later-1', delay: 600_000 })
  t.equal((await waitForValue(health, (status) => status !== 200, STUCK_MS * 3, 250)).value, 200, 'due in ten minutes: not stuck')
  await queue.add('late', {}, { jobId: 'late-1', delay: 10 })
  t.equal((await waitForValue(health, (status) => status === 503, STUCK_MS * 8, 100)).value, 503, 'overdue and not taken: stuck')
})

t.test('courier_queue_jobs: waiting counts the jobs ready for a worker, prioritized ones included', async (t) => {
  const queue = new Queue('gauge-wait', { connection, prefix: db.env.QUEUE_PREFIX })
  t.teardown(async () => {
    await queue.obliterate({ force: true })
    await queue.close()
  })
  observeQueueJobs(queue)
  // The dispatcher's wakes carry a priority: BullMQ keeps them apart from the plain waiting list.
  await queue.add('plain', {}, { jobId: 'plain-1' })
  await queue.add('wake', {}, { jobId: 'wake-1', priority: 10 })
  await queue.add('wake', {}, { jobId: 'wake-2', priority: 10 })
  await queue.add('later', {}, { jobId: 'later-1', delay: 600_000 })
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const gauge = (state: string) => new RegExp(`courier_queue_jobs\\{[^}]*queue="gauge-wait"[^}]*state="${state}"[^}]*\\} (\\d+)`).exec(text)?.[1]
  t.equal(gauge('waiting'), '3', 'one plain and two prioritized jobs wait')
  t.equal(gauge('delayed'), '1')
  t.equal(gauge('active'), '0')
  t.notOk(/state="prioritized"/.test(text), 'no state of its own: the alerts and dashboards read waiting')
})

t.test('courier_queue_jobs: every queue a process consumes, on one gauge (the worker: placements and the sandbox courier)', async (t) => {
  const queues = ['gauge-first', 'gauge-second'].map((name) => new Queue(name, { connection, prefix: db.env.QUEUE_PREFIX }))
  t.teardown(async () => {
    for (const queue of queues) {
      await queue.obliterate({ force: true })
      await queue.close()
    }
  })
  observeQueueJobs(...queues)
  await queues[0]!.add('one', {}, { jobId: 'one-1' })
  for (const id of ['two-1', 'two-2']) await queues[1]!.add('two', {}, { jobId: id, delay: 600_000 })
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
  const gauge = (queue: string, state: string) => new RegExp(`courier_queue_jobs\\{[^}]*queue="${queue}"[^}]*state="${state}"[^}]*\\} (\\d+)`).exec(text)?.[1]
  t.same([gauge('gauge-first', 'waiting'), gauge('gauge-second', 'delayed')], ['1', '2'], 'each queue its own series')
})

t.test("courier_queue_jobs with the queue's Redis down: the scrape still answers, within its bound", async (t) => {
  const own = await startOwnRedis(t)
  // As the services make BullMQ's connection: commands wait for Redis to come back, however long.
  const waiting = new Redis(own.url, { maxRetriesPerRequest: null })
  const queue = new Queue('gauge-down', { connection: waiting, prefix: db.env.QUEUE_PREFIX })
  t.teardown(async () => {
    waiting.disconnect()
    await queue.close()
  })
  observeQueueJobs(queue)
  await queue.add('plain', {}, { jobId: 'plain-1' })
  const waitingJobs = (text: string) => /courier_queue_jobs\{[^}]*queue="gauge-down"[^}]*state="waiting"[^}]*\} (\S+)/.exec(text)?.[1]
  t.equal(waitingJobs(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()), '1', 'one job waits while Redis is up')
  await own.stop()
  // Prometheus gives a scrape 10 s: a gauge left waiting on Redis would make the service read as down.
  const scrape = await withDeadline(fetch(`http://127.0.0.1:${metricsPort}/metrics`), 8000)
  t.equal(scrape.status, 200)
  const text = await scrape.text()
  t.match(text, /courier_queue_jobs/, 'the other series are still exported')
  // Not the last count repeated as if read now: the SDK would go on exporting "1" for ever.
  t.equal(waitingJobs(text), 'NaN', 'the depth it could not read is unknown (a gap), not the last one')
})
