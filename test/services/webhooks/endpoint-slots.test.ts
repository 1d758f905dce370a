import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import t, { type Test } from 'tap'
import { createEndpointSlots } from '../../../services/webhook-sender/endpoint-slots.js'
import { waitFor } from '../../helpers/processes.js'

// An endpoint's slots (WEBHOOK_ENDPOINT_CONCURRENCY): a delivery waits in hand a little for one
// to come free, and gets none while they stay taken; on the shared Redis under a prefix of its own.
// Two `createEndpointSlots` on one prefix stand for two sender replicas.

function slotsOf(t: Test) {
  const redis = new Redis(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379')
  const prefix = `{slots-test-${randomBytes(4).toString('hex')}}`
  const key = `${prefix}:webhook-slots:endpoint`
  t.teardown(async () => {
    await redis.del(key)
    redis.disconnect()
  })
  const leases = () => redis.zrange(key, '0', '-1')
  return { redis, prefix, key, leases }
}

t.test('a slot freed during the wait is taken; none is taken past the cap', async (t) => {
  const { redis, prefix, key } = slotsOf(t)
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
  t.equal(await redis.zcard(key), 2, 'and the cap still holds')
  await second!()
  await third!()
  t.equal(await redis.zcard(key), 0, 'every slot given back')
})

t.test('a slot given back while a delivery of the same process waits is handed to it, first come first served', async (t) => {
  const { redis, prefix, leases } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 1, leaseMs: 60_000 })
  const first = await slots.acquire('endpoint')
  t.ok(first, 'the one slot')
  const held = await leases()
  const served: string[] = []
  const early = slots.acquire('endpoint', 5_000).then((slot) => (served.push('early'), slot))
  const late = slots.acquire('endpoint', 5_000).then((slot) => (served.push('late'), slot))
  t.ok(await waitFor(() => slots.waiting('endpoint') === 2, 5_000, 5), 'both wait in line')

  await first!()
  const next = await early
  t.ok(next, 'the first to wait has it')
  t.same(await leases(), held, 'the same lease, passed on rather than given back and taken again')
  t.same(served, ['early'], 'the later one still waits')
  await next!()
  t.ok(await late, 'then the later one has it')
  t.same(await leases(), held, 'still that lease')
  await (await late)!()
  t.same(await leases(), [], 'given back to Redis once nobody here waits')
})

t.test('a delivery that gave up is handed nothing, and the slot goes back to Redis', async (t) => {
  const { redis, prefix, leases } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 1, leaseMs: 60_000 })
  const first = await slots.acquire('endpoint')
  t.equal(await slots.acquire('endpoint', 50), null, 'the wait ran out while the slot stayed taken')
  await first!()
  t.same(await leases(), [], 'nobody waits any more: the lease is gone from Redis')
  const again = await slots.acquire('endpoint')
  t.ok(again, 'and the slot is free for the next')
  await again!()
})

t.test('the cap holds across replicas: a slot given back in one is found by a delivery waiting in the other', async (t) => {
  const { redis, prefix, key } = slotsOf(t)
  const one = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const other = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const held = [await one.acquire('endpoint'), await other.acquire('endpoint')]
  t.ok(held.every(Boolean), 'one slot in each')
  t.equal(await one.acquire('endpoint'), null, 'the cap counts both replicas\' slots')
  t.equal(await other.acquire('endpoint', 100), null, 'in either')

  const waiting = other.acquire('endpoint', 5_000)
  await held[0]!()
  const taken = await waiting
  t.ok(taken, 'the other replica\'s waiting delivery took the slot given back')
  t.equal(await redis.zcard(key), 2, 'and the cap still holds')
  await held[1]!()
  await taken!()
  t.equal(await redis.zcard(key), 0, 'every slot given back')
})

t.test('a lease handed on late in its life is extended first; one Redis no longer holds is not handed on', async (t) => {
  const { redis, prefix, key, leases } = slotsOf(t)
  const leaseMs = 2_000
  const slots = createEndpointSlots(redis, { prefix, limit: 1, leaseMs })
  // A lease's score in Redis is the expiry the process holds for it: past expiry − leaseMs / 2 it
  // is late in its life, and a hand-on must extend it first. The waits are for that, on the
  // lease's own expiry; the waiters' deadlines are far beyond the lease, so neither gives up first.
  const lateInLife = (expiresAt: number) => slots.waiting('endpoint') === 1 && Date.now() > expiresAt - leaseMs / 2
  const first = await slots.acquire('endpoint')
  const [token] = await leases()
  const expiry = Number(await redis.zscore(key, token!))
  const waiting = slots.acquire('endpoint', leaseMs * 5)
  t.ok(await waitFor(() => lateInLife(expiry), leaseMs * 3, 20), 'past half the lease, with a delivery waiting')
  await first!()
  t.equal(slots.waiting('endpoint'), 0, 'the waiting delivery was handed it')
  const second = await waiting
  t.ok(second, 'handed on')
  t.same(await leases(), [token], 'the same lease')
  const extended = Number(await redis.zscore(key, token!))
  t.ok(extended > expiry + leaseMs / 2, 'with its expiry moved on')

  // Redis lost the lease (a flush, an expiry) and another replica holds the one slot now.
  await redis.multi().zrem(key, token!).zadd(key, Date.now() + 60_000, 'another-replica').exec()
  const stillWaiting = slots.acquire('endpoint', leaseMs * 5)
  t.ok(await waitFor(() => lateInLife(extended), leaseMs * 3, 20), 'past half the lease again, with a delivery waiting')
  await second!()
  t.equal(slots.waiting('endpoint'), 1, 'the waiting delivery is not handed a lease that is gone: it still waits')
  t.same(await leases(), ['another-replica'], 'and the other replica\'s slot stays its own: the cap holds')
  // The other replica gives its slot back: the delivery still waiting takes it from Redis, a new lease.
  await redis.zrem(key, 'another-replica')
  const third = await stillWaiting
  t.ok(third, 'the waiting delivery has the slot freed in Redis')
  const now = await leases()
  t.equal(now.length, 1, 'one lease')
  t.not(now[0], token, 'a new one, not the lease Redis lost')
  await third!()
})

t.test('a slot given back with nobody waiting is kept a moment for the next delivery here, then Redis has it back', async (t) => {
  const { redis, prefix, leases } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 1, leaseMs: 60_000 })
  const first = await slots.acquire('endpoint')
  const held = await leases()
  const given = first!()
  const next = await slots.acquire('endpoint')
  t.ok(next, 'the next delivery has it at once')
  await given
  t.same(await leases(), held, 'the same lease, never given back to Redis and taken again')
  await next!()
  t.same(await leases(), [], 'nobody wanted it: given back to Redis')
  const other = createEndpointSlots(redis, { prefix, limit: 1, leaseMs: 60_000 })
  const elsewhere = await other.acquire('endpoint')
  t.ok(elsewhere, 'where another replica finds it')
  await elsewhere!()
})

t.test('while this process holds every slot, a delivery waits in line without asking Redis', async (t) => {
  const { redis, prefix, key } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 1, leaseMs: 60_000 })
  const first = await slots.acquire('endpoint')
  // Were Redis asked, it would give a slot now: it has lost the one lease.
  await redis.del(key)
  t.equal(await slots.acquire('endpoint'), null, 'none without waiting')
  const waiting = slots.acquire('endpoint', 5_000)
  t.ok(await waitFor(() => slots.waiting('endpoint') === 1, 5_000, 5), 'it waits in line')
  t.equal(await redis.zcard(key), 0, 'and took nothing from Redis')
  await first!()
  const handed = await waiting
  t.ok(handed, 'the slot given back here is handed to it')
  await handed!()
})

t.test('stopping gives back at once the slots kept for a next delivery', async (t) => {
  const { redis, prefix, leases } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const held = [await slots.acquire('endpoint'), await slots.acquire('endpoint')]
  const given = held.map((release) => release!())
  t.equal((await leases()).length, 2, 'both kept')
  await slots.close()
  await Promise.all(given)
  t.same(await leases(), [], 'both given back to Redis')
})

t.test('a burst of deliveries asks Redis for no more slots than the cap, and all of them get one in turn', async (t) => {
  const { redis, prefix } = slotsOf(t)
  let asked = 0
  const counting = new Proxy(redis, {
    get(target, name) {
      const value = Reflect.get(target, name, target)
      if (name === 'evalsha') return (...args: unknown[]) => (asked++, value.apply(target, args))
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const slots = createEndpointSlots(counting, { prefix, limit: 2, leaseMs: 60_000 })
  const served = await Promise.all(Array.from({ length: 10 }, async () => {
    const release = await slots.acquire('endpoint', 5_000)
    await new Promise((resolve) => setImmediate(resolve))
    void release?.()
    return release !== null
  }))
  t.equal(served.filter(Boolean).length, 10, 'every delivery had a slot')
  t.equal(asked, 2, 'Redis was asked for two, the cap; the rest were handed on here')
})

t.test('a slot given back while a delivery was still asking Redis goes to that delivery, not back to Redis', async (t) => {
  const { redis, prefix, leases } = slotsOf(t)
  const slots = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const other = createEndpointSlots(redis, { prefix, limit: 2, leaseMs: 60_000 })
  const elsewhere = await other.acquire('endpoint')
  const first = await slots.acquire('endpoint')
  const held = await leases()
  // One of the two slots is free as far as this process knows, so the next delivery asks Redis,
  // which refuses (the other replica holds the second); meanwhile the first is given back here.
  const next = slots.acquire('endpoint', 5_000)
  const given = first!()
  const handed = await next
  t.ok(handed, 'the delivery has a slot')
  await given
  t.same((await leases()).sort(), held.sort(), 'the lease given back, handed on: no new one taken, none given back to Redis')
  await handed!()
  await elsewhere!()
})
