import { randomUUID } from 'node:crypto'
import { luaScript, type RedisClient } from '../../shared/redis.js'

// Drops leases past their expiry, then takes one while fewer than the cap are held. One round
// trip, atomic across every sender replica.
const ACQUIRE = luaScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`)

// Moves a lease's expiry on, and the key's with it, while the lease is still held; 0 when it is
// gone (expired and dropped, or Redis lost it), and then it is not taken again here.
const EXTEND = luaScript(`
if not redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`)

// While an endpoint's slots are all taken, how often this process looks again (doubling up to the most).
const POLL_FIRST_MS = 5
const POLL_MAX_MS = 50

/** Gives a slot back; never throws (a lease that is not returned expires on its own). */
export type ReleaseSlot = () => Promise<void>

/** One lease in the endpoint's sorted set, and when it expires there (this process's clock). */
interface Lease {
  token: string
  expiresAt: number
}

/** A delivery waiting in hand for a slot: `take` is false once it has given up. */
interface Waiter {
  take: (lease: Lease) => boolean
}

/** The deliveries of this process waiting for one endpoint, first come first served. */
interface Line {
  waiters: Waiter[]
}

/**
 * At most `limit` deliveries in flight per endpoint, across every sender replica: one slow
 * receiver holds its own few slots, not the sender's whole concurrency, so every other tenant's
 * deliveries go on. Slots are leases in a Redis sorted set per endpoint, scored by expiry, so a
 * sender that dies holding one frees it after `leaseMs`.
 *
 * Within a process a slot given back while a delivery here waits for that endpoint goes to it
 * directly, lease and all (first come first served): the slots of a fast receiver stay busy
 * back to back instead of idling until a poll notices them. Only when nobody here waits is the
 * lease given back to Redis. While deliveries wait, one poll per endpoint looks for a slot freed
 * elsewhere (another replica's, or a dead one's lease expired).
 */
export function createEndpointSlots(redis: RedisClient, options: { prefix: string; limit: number; leaseMs: number }) {
  const key = (endpointId: string) => `${options.prefix}:webhook-slots:${endpointId}`
  const lines = new Map<string, Line>()

  const take = async (endpointId: string): Promise<Lease | null> => {
    const token = randomUUID()
    const now = Date.now()
    const expiresAt = now + options.leaseMs
    const taken = await ACQUIRE(redis, [key(endpointId)], [now, options.limit, expiresAt, token, options.leaseMs * 2])
    return taken === 1 ? { token, expiresAt } : null
  }

  // A lease handed on must outlive the next POST: past half its time, it is extended first.
  const extend = async (endpointId: string, lease: Lease): Promise<boolean> => {
    const expiresAt = Date.now() + options.leaseMs
    const extended = await EXTEND(redis, [key(endpointId)], [expiresAt, lease.token, options.leaseMs * 2]).catch(() => 0)
    if (extended === 1) lease.expiresAt = expiresAt
    return extended === 1
  }

  /** To the first delivery here still waiting for the endpoint; back to Redis when there is none. */
  const handOn = async (endpointId: string, lease: Lease): Promise<void> => {
    for (;;) {
      const waiter = lines.get(endpointId)?.waiters.shift()
      if (!waiter) {
        await redis.zrem(key(endpointId), lease.token).catch(() => undefined)
        return
      }
      if (lease.expiresAt - Date.now() < options.leaseMs / 2 && !(await extend(endpointId, lease))) {
        // The lease is gone: the waiter goes back to the head of its line, and the poll finds it a slot.
        const line = lines.get(endpointId)
        if (line) line.waiters.unshift(waiter)
        else waitIn(endpointId, waiter)
        return
      }
      if (waiter.take(lease)) return
    }
  }

  const releaser = (endpointId: string, lease: Lease): ReleaseSlot => {
    let released = false
    return async () => {
      if (released) return
      released = true
      await handOn(endpointId, lease)
    }
  }

  // One poll per endpoint while anyone here waits for it; what it takes goes to the head of the line.
  const poll = async (endpointId: string, line: Line) => {
    let pause = POLL_FIRST_MS
    while (line.waiters.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, pause))
      if (line.waiters.length === 0) break
      const lease = await take(endpointId).catch(() => null)
      if (lease) await handOn(endpointId, lease)
      pause = lease ? POLL_FIRST_MS : Math.min(pause * 2, POLL_MAX_MS)
    }
    // In the same turn as the last look at the line: a line in the map always has its poll.
    lines.delete(endpointId)
  }

  const waitIn = (endpointId: string, waiter: Waiter) => {
    const line = lines.get(endpointId)
    if (line) return void line.waiters.push(waiter)
    const started: Line = { waiters: [waiter] }
    lines.set(endpointId, started)
    void poll(endpointId, started)
  }

  const wait = (endpointId: string, until: number): Promise<Lease | null> => new Promise((resolve) => {
    let waiting = true
    const waiter: Waiter = {
      take: (lease) => {
        if (!waiting) return false
        waiting = false
        clearTimeout(timer)
        resolve(lease)
        return true
      },
    }
    const timer = setTimeout(() => {
      waiting = false
      const line = lines.get(endpointId)
      const index = line?.waiters.indexOf(waiter) ?? -1
      if (index >= 0) line!.waiters.splice(index, 1)
      resolve(null)
    }, Math.max(0, until - Date.now()))
    waitIn(endpointId, waiter)
  })

  return {
    /**
     * A slot of the endpoint and how to give it back, or null while all of them stay taken for
     * `waitMs`. A fast receiver's slots turn over in milliseconds, so a short wait here keeps its
     * deliveries flowing; a slow receiver's do not, and the caller puts the delivery aside.
     * Redis is asked at once only when nobody here already waits for the endpoint, so those who
     * came first are served first.
     */
    async acquire(endpointId: string, waitMs = 0): Promise<ReleaseSlot | null> {
      const until = Date.now() + waitMs
      if (waitMs <= 0 || !lines.has(endpointId)) {
        const lease = await take(endpointId)
        if (lease) return releaser(endpointId, lease)
        if (waitMs <= 0) return null
      }
      const lease = await wait(endpointId, until)
      return lease && releaser(endpointId, lease)
    },

    /** How many deliveries of this process wait in hand for a slot of the endpoint. */
    waiting(endpointId: string): number {
      return lines.get(endpointId)?.waiters.length ?? 0
    },
  }
}

export type EndpointSlots = ReturnType<typeof createEndpointSlots>
