import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import t from 'tap'
import { createEndpointSlots } from '../../../services/webhook-sender/endpoint-slots.js'

// An endpoint's slots (WEBHOOK_ENDPOINT_CONCURRENCY): a delivery waits in hand a little for one
// to come free, and gets none while they stay taken; on the shared Redis under a prefix of its own.
t.test('a slot freed during the wait is taken; none is taken past the cap', async (t) => {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379')
  const prefix = `{slots-test-${randomBytes(4).toString('hex')}}`
  t.teardown(async () => {
    await redis.del(`${prefix}:webhook-slots:endpoint`)
    redis.disconnect()
  })
  const slots = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const first = await slots.acquire('endpoint')
  const second = await slots.acquire('endpoint')
  t.ok(first && second, 'two slots under a cap of two')
  t.equal(await slots.acquire('endpoint'), null, 'a third without waiting: none')
  t.equal(await slots.acquire('endpoint', 100), null, 'nor after waiting while both stay taken')

  const waiting = slots.acquire('endpoint', 5_000)
  await first!()
  const third = await waiting
  t.ok(third, 'one freed during the wait is taken')
  t.equal(await redis.zcard(`${prefix}:webhook-slots:endpoint`), 2, 'and the cap still holds')
  await second!()
  await third!()
  t.equal(await redis.zcard(`${prefix}:webhook-slots:endpoint`), 0, 'every slot given back')
})
