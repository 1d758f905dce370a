import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import t from 'tap'
import { lookNow, offerJob, offerJobId, spread, type DispatchJob } from '../../../shared/dispatch/queue.js'
import { useTestDb } from '../../helpers/db.js'
import { waitForValue } from '../../helpers/processes.js'

// `lookNow`, what a decline, a hand-back and a courier come free ask of an order: a look now,
// whatever the order's one `offer` job is doing. Against real BullMQ, with a worker of the test's
// own that holds a job running until told to finish.
const db = await useTestDb(t)
const connection = new Redis(db.env.REDIS_URL, { maxRetriesPerRequest: null })
const queue = new Queue<DispatchJob>('look-now', { connection, prefix: db.env.QUEUE_PREFIX })
let finish: () => void = () => undefined
const worker = new Worker<DispatchJob>('look-now', (job) => job.name === 'offer' ? new Promise<void>((resolve) => { finish = resolve }) : Promise.resolve(), { connection, prefix: db.env.QUEUE_PREFIX, autorun: false })
t.teardown(async () => {
  finish()
  await worker.close()
  await queue.obliterate({ force: true })
  await queue.close()
  connection.disconnect()
})

t.test('no job: one is queued; a job delayed to its retry: brought forward', async (t) => {
  await lookNow(queue, 'ORD-NOJOB00001')
  t.equal(await (await queue.getJob(offerJobId('ORD-NOJOB00001')))?.getState(), 'waiting')
  await queue.add(...spread(offerJob('ORD-DELAYED001', 600_000)))
  await lookNow(queue, 'ORD-DELAYED001')
  t.equal(await (await queue.getJob(offerJobId('ORD-DELAYED001')))?.getState(), 'waiting', 'promoted, not left to the retry')
  await queue.drain(true)
})

t.test('a job running (it may have looked before the decline): a look after it is queued, once however often asked', async (t) => {
  await queue.add(...spread(offerJob('ORD-RUNNING001')))
  worker.run().catch(() => undefined)
  const running = await waitForValue(async () => (await queue.getJob(offerJobId('ORD-RUNNING001')))?.getState(), (state) => state === 'active', 10_000, 20)
  t.equal(running.value, 'active')
  await worker.pause(true)
  await lookNow(queue, 'ORD-RUNNING001')
  await lookNow(queue, 'ORD-RUNNING001')
  const waiting = await queue.getWaiting()
  t.same(waiting.map((job) => [job.id, job.data]), [['again-ORD-RUNNING001', { kind: 'offers', order_ids: ['ORD-RUNNING001'] }]], 'one one-order look waits behind the running one')
  finish()
})
