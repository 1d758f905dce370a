import { randomUUID } from 'node:crypto'
import type { RedisClient } from '../../shared/redis.js'

// Drops leases past their expiry, then takes one while fewer than the cap are held. One round
// trip, atomic across every sender replica.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`

// While an endpoint's slots are all taken, how often to look again (doubling up to the most).
const POLL_FIRST_MS = 5
const POLL_MAX_MS = 50

/** Gives a slot back; never throws (a lease that is not returned expires on its own). */
export type ReleaseSlot = () => Promise<void>

/**
 * At most `limit` deliveries in flight per endpoint, across every sender replica: one slow
 * receiver holds its own few slots, not the sender's whole concurrency, so every other tenant's
 * deliveries go on. Slots are leases in a Redis sorted set per endpoint, scored by expiry, so a
 * sender that dies holding one frees it after `leaseMs`.
 */
export function createEndpointSlots(redis: RedisClient, options: { prefix: string; limit: number; leaseMs: number }) {
  const key = (endpointId: string) => `${options.prefix}:webhook-slots:${endpointId}`
  return {
    /**
     * A slot of the endpoint and how to give it back, or null while all of them stay taken for
     * `waitMs`. A fast receiver's slots turn over in milliseconds, so a short wait here keeps its
     * deliveries flowing; a slow receiver's do not, and the caller puts the delivery aside.
     */
    async acquire(endpointId: string, waitMs = 0): Promise<ReleaseSlot | null> {
      const token = randomUUID()
      const until = Date.now() + waitMs
      for (let pause = POLL_FIRST_MS; ; pause = Math.min(pause * 2, POLL_MAX_MS)) {
        const now = Date.now()
        const taken = await redis.eval(ACQUIRE, 1, key(endpointId), now, options.limit, now + options.leaseMs, token, options.leaseMs * 2)
        if (taken === 1) {
          return async () => {
            await redis.zrem(key(endpointId), token).catch(() => undefined)
          }
        }
        if (Date.now() + pause > until) return null
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
    },
  }
}

export type EndpointSlots = ReturnType<typeof createEndpointSlots>
