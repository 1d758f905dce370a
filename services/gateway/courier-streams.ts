import type { ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import type { CommonConfig } from '../../shared/config.js'
import { courierChannel, readCourierNotice, type CourierNoticeMessage } from '../../shared/couriers/stream.js'
import { createRedis } from '../../shared/redis.js'

type Listener = (notice: CourierNoticeMessage) => void

/**
 * Couriers' Server-Sent Event streams over one Redis subscriber per gateway: a channel is
 * subscribed while at least one of its courier's streams is open here.
 */
export function createCourierStreams(config: Pick<CommonConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES' | 'QUEUE_PREFIX'>, log: FastifyBaseLogger) {
  const subscriber = createRedis(config, { maxRetriesPerRequest: null, lazyConnect: true })
  subscriber.on('error', (err) => log.debug({ err: err.message }, 'courier stream subscriber error'))
  /** The streams open here, each with the hash of the token it was opened with. */
  const open = new Map<ServerResponse, string>()
  /** Set once the gateway stops (`endAll`): no stream opens after that, since none would be ended. */
  let stopping = false
  /** A channel's streams here, and its subscription (made once, awaited by every stream that joins meanwhile). */
  const channels = new Map<string, { listeners: Set<Listener>; subscribed: Promise<unknown> }>()
  subscriber.on('message', (channel: string, message: string) => {
    const listening = channels.get(channel)?.listeners
    if (!listening) return
    // Read once for every stream of the courier; one this gateway cannot read is dropped, never thrown
    // out of the subscriber (which would take the process down with it).
    const notice = readCourierNotice(message)
    if (!notice) {
      log.warn({ channel }, 'unreadable courier notice dropped')
      return
    }
    for (const listener of listening) listener(notice)
  })
  /** Takes `listener` off the channel, and the channel off Redis with its last stream. */
  function leave(channel: string, entry: { listeners: Set<Listener> }, listener: Listener) {
    entry.listeners.delete(listener)
    if (entry.listeners.size === 0 && channels.get(channel) === entry) {
      channels.delete(channel)
      subscriber.unsubscribe(channel).catch(() => {})
    }
  }
  return {
    /**
     * Calls `listener` with each notice for the courier until the returned function is called. The
     * listener joins its channel before the subscription is awaited, so another stream of the
     * courier that opens and closes meanwhile never leaves the channel empty and unsubscribed.
     */
    async listen(courierId: string, listener: Listener): Promise<() => void> {
      const channel = courierChannel(config.QUEUE_PREFIX, courierId)
      let entry = channels.get(channel)
      if (!entry) {
        entry = { listeners: new Set(), subscribed: subscriber.subscribe(channel) }
        channels.set(channel, entry)
      }
      const joined = entry
      joined.listeners.add(listener)
      try {
        await joined.subscribed
      } catch (err) {
        // A failed subscription is forgotten with its streams, so the next stream subscribes afresh.
        if (channels.get(channel) === joined) channels.delete(channel)
        joined.listeners.delete(listener)
        throw err
      }
      return () => leave(channel, joined, listener)
    },
    /** Keeps a stream until `closed`, so a stop or its token's revocation can end it. */
    opened: (raw: ServerResponse, tokenHash: string) => void open.set(raw, tokenHash),
    closed: (raw: ServerResponse) => void open.delete(raw),
    /** Ends every stream: the gateway is stopping, and its couriers reconnect to a replica still serving. */
    endAll: () => {
      stopping = true
      for (const raw of open.keys()) raw.end()
    },
    /** Whether the gateway is stopping: a stream asked for now is refused, for the app to reconnect elsewhere. */
    stopping: () => stopping,
    /** Ends the streams opened with these tokens (revoked: the courier disabled), as the next request with one would be refused. */
    revoke: (tokenHashes: string[]) => {
      const revoked = new Set(tokenHashes)
      for (const [raw, hash] of open) if (revoked.has(hash)) raw.end()
    },
    /**
     * Ends the streams whose token no longer lets its courier in, by `live` (which of these token
     * hashes are still good): after the invalidation channel was away, when a revocation may have
     * gone unheard.
     */
    recheck: async (live: (tokenHashes: string[]) => Promise<Set<string>>) => {
      if (open.size === 0) return
      const good = await live([...new Set(open.values())])
      for (const [raw, hash] of open) if (!good.has(hash)) raw.end()
    },
    close: () => subscriber.disconnect(),
  }
}

export type CourierStreams = ReturnType<typeof createCourierStreams>
