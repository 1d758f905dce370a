import { randomUUID } from 'node:crypto'
import { luaScript } from '../../shared/lua-script.js'
import type { RedisClient } from '../../shared/redis.js'

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
// A lease nobody here wants when it is given back stays this long for the next delivery of this
// process before Redis has it back: a burst's deliveries come a few milliseconds apart, and each
// gap would otherwise cost a round trip to give the slot back and one to take it again.
const KEEP_MS = 10

/** Gives a slot back; never throws, and settles once the lease has gone where it goes. */
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

/** A lease kept a moment after it was given back, and what to settle once it has gone on. */
interface Kept {
  lease: Lease
  since: number
  gone: () => void
}

/** What this process has of one endpoint: its deliveries waiting (first come first served), the leases it holds. */
interface Line {
  waiters: Waiter[]
  /** Every lease this process holds, in flight or kept. */
  leases: Set<Lease>
  kept: Kept[]
  /** Leases asked of Redis and not yet answered. */
  asking: number
  /** Calls of `acquire` under way. */
  acquiring: number
  polling: boolean
  sweep: NodeJS.Timeout | null
}

/**
 * At most `limit` deliveries in flight per endpoint, across every sender replica: one slow
 * receiver holds its own few slots, not the sender's whole concurrency, so every other tenant's
 * deliveries go on. Slots are leases in a Redis sorted set per endpoint, scored by expiry, so a
 * sender that dies holding one frees it after `leaseMs`.
 *
 * Within a process a slot given back while a delivery here waits for that endpoint goes to it
 * directly, lease and all (first come first served): the slots of a fast receiver stay busy
 * back to back instead of idling until a poll notices them. When nobody here waits, the lease is
 * kept `KEEP_MS` for the next delivery here, then given back to Redis. Redis is not asked while
 * this process holds or is asking for every slot (it would refuse: the cap counts these leases).
 * While deliveries wait and a slot may be free elsewhere, one poll per endpoint looks for it
 * (another replica's given back, or a dead one's lease expired).
 */
export function createEndpointSlots(redis: RedisClient, options: { prefix: string; limit: number; leaseMs: number }) {
  const key = (endpointId: string) => `${options.prefix}:webhook-slots:${endpointId}`
  const lines = new Map<string, Line>()

  const lineOf = (endpointId: string): Line => {
    let line = lines.get(endpointId)
    if (!line) lines.set(endpointId, (line = { waiters: [], leases: new Set(), kept: [], asking: 0, acquiring: 0, polling: false, sweep: null }))
    return line
  }
  // A line is forgotten once nothing of it is left; a leaked lease counts only until it expires.
  const forgetIfUnused = (endpointId: string, line: Line) => {
    if (line.waiters.length === 0 && line.leases.size === 0 && line.acquiring === 0 && !line.polling && line.sweep === null) lines.delete(endpointId)
  }
  // Redis is asked only while the leases held or asked for here are fewer than the cap: past
  // it, Redis would refuse (the cap counts them), and a burst's deliveries do not all ask at once.
  const mayAsk = (line: Line): boolean => {
    const now = Date.now()
    let live = line.asking
    for (const lease of line.leases) if (lease.expiresAt > now) live++
    return live < options.limit
  }

  const take = async (endpointId: string, line: Line): Promise<Lease | null> => {
    const token = randomUUID()
    const now = Date.now()
    const expiresAt = now + options.leaseMs
    line.asking++
    try {
      const taken = await ACQUIRE(redis, [key(endpointId)], [now, options.limit, expiresAt, token, options.leaseMs * 2])
      if (taken !== 1) return null
    } finally {
      line.asking--
    }
    const lease = { token, expiresAt }
    line.leases.add(lease)
    return lease
  }

  // A lease used again must outlive the next POST: past half its time, it is extended first.
  // False when Redis no longer holds it (expired and dropped, or lost): it is not used again here.
  const fresh = async (endpointId: string, line: Line, lease: Lease): Promise<boolean> => {
    if (lease.expiresAt - Date.now() >= options.leaseMs / 2) return true
    const expiresAt = Date.now() + options.leaseMs
    const extended = await EXTEND(redis, [key(endpointId)], [expiresAt, lease.token, options.leaseMs * 2]).catch(() => 0)
    if (extended === 1) lease.expiresAt = expiresAt
    else line.leases.delete(lease)
    return extended === 1
  }

  const giveBack = async (endpointId: string, line: Line, lease: Lease): Promise<void> => {
    line.leases.delete(lease)
    await redis.zrem(key(endpointId), lease.token).catch(() => undefined)
  }

  // Gives back to Redis what was kept past KEEP_MS; looks again while some is still kept.
  const sweep = (endpointId: string, line: Line) => {
    line.sweep = null
    const due = Date.now() - KEEP_MS
    let oldest = line.kept[0]
    while (oldest && oldest.since <= due) {
      line.kept.shift()
      void giveBack(endpointId, line, oldest.lease).then(oldest.gone)
      oldest = line.kept[0]
    }
    if (oldest) line.sweep = setTimeout(sweep, oldest.since - due, endpointId, line)
    forgetIfUnused(endpointId, line)
  }

  /** To the first delivery here still waiting for the endpoint; kept a moment when there is none. */
  const handOn = async (endpointId: string, line: Line, lease: Lease): Promise<void> => {
    for (;;) {
      const waiter = line.waiters.shift()
      if (!waiter) {
        await new Promise<void>((gone) => {
          line.kept.push({ lease, since: Date.now(), gone })
          line.sweep ??= setTimeout(sweep, KEEP_MS, endpointId, line)
        })
        return
      }
      if (!(await fresh(endpointId, line, lease))) {
        // The lease is gone: the waiter goes back to the head of its line, and the poll finds it a slot.
        line.waiters.unshift(waiter)
        startPolling(endpointId, line)
        return
      }
      if (waiter.take(lease)) return
    }
  }

  const releaser = (endpointId: string, line: Line, lease: Lease): ReleaseSlot => {
    let released = false
    return async () => {
      if (released) return
      released = true
      await handOn(endpointId, line, lease)
    }
  }

  // One poll per endpoint while anyone here waits for it; what it takes goes to the head of the line.
  const poll = async (endpointId: string, line: Line) => {
    let pause = POLL_FIRST_MS
    while (line.waiters.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, pause))
      if (line.waiters.length === 0) break
      const lease = mayAsk(line) ? await take(endpointId, line).catch(() => null) : null
      if (lease) await handOn(endpointId, line, lease)
      pause = lease ? POLL_FIRST_MS : Math.min(pause * 2, POLL_MAX_MS)
    }
    // In the same turn as the last look at the line: a line with waiters always has its poll.
    line.polling = false
    forgetIfUnused(endpointId, line)
  }
  const startPolling = (endpointId: string, line: Line) => {
    if (line.polling) return
    line.polling = true
    void poll(endpointId, line)
  }

  const wait = (endpointId: string, line: Line, until: number): Promise<Lease | null> => new Promise((resolve) => {
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
      const index = line.waiters.indexOf(waiter)
      if (index >= 0) line.waiters.splice(index, 1)
      resolve(null)
    }, Math.max(0, until - Date.now()))
    line.waiters.push(waiter)
    startPolling(endpointId, line)
    // A slot given back while this delivery was on its way here (asking Redis, say) is kept: it is handed on now.
    const kept = line.kept.pop()
    if (kept) {
      kept.gone()
      void handOn(endpointId, line, kept.lease)
    }
  })

  // A kept lease, most recently given back first (the others may then age out); null when none is left.
  const reuse = async (endpointId: string, line: Line): Promise<Lease | null> => {
    for (let kept = line.kept.pop(); kept; kept = line.kept.pop()) {
      kept.gone()
      if (await fresh(endpointId, line, kept.lease)) return kept.lease
    }
    return null
  }

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
      const line = lineOf(endpointId)
      line.acquiring++
      try {
        const kept = await reuse(endpointId, line)
        if (kept) return releaser(endpointId, line, kept)
        if (line.waiters.length === 0 && mayAsk(line)) {
          const lease = await take(endpointId, line)
          if (lease) return releaser(endpointId, line, lease)
        }
        if (waitMs <= 0) return null
        const lease = await wait(endpointId, line, until)
        return lease && releaser(endpointId, line, lease)
      } finally {
        line.acquiring--
        forgetIfUnused(endpointId, line)
      }
    },

    /** How many deliveries of this process wait in hand for a slot of the endpoint. */
    waiting(endpointId: string): number {
      return lines.get(endpointId)?.waiters.length ?? 0
    },

    /** Gives back at once every lease kept for a next delivery (the sender is stopping). */
    async close(): Promise<void> {
      await Promise.all([...lines].map(async ([endpointId, line]) => {
        if (line.sweep) clearTimeout(line.sweep)
        line.sweep = null
        const kept = line.kept.splice(0)
        await Promise.all(kept.map(({ lease, gone }) => giveBack(endpointId, line, lease).then(gone)))
        forgetIfUnused(endpointId, line)
      }))
    },
  }
}

export type EndpointSlots = ReturnType<typeof createEndpointSlots>
