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
  const listeners = new Map<string, Set<Listener>>()
  subscriber.on('message', (channel: string, message: string) => {
    const open = listeners.get(channel)
    if (!open) return
    // Read once for every stream of the courier; one this gateway cannot read is dropped, never thrown
    // out of the subscriber (which would take the process down with it).
    const notice = readCourierNotice(message)
    if (!notice) {
      log.warn({ channel }, 'unreadable courier notice dropped')
      return
    }
    for (const listener of open) listener(notice)
  })
  return {
    /** Calls `listener` with each notice for the courier until the returned function is called. */
    async listen(courierId: string, listener: Listener): Promise<() => void> {
      const channel = courierChannel(config.QUEUE_PREFIX, courierId)
      let set = listeners.get(channel)
      if (!set) {
        set = new Set()
        listeners.set(channel, set)
        await subscriber.subscribe(channel)
      }
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(channel) === set) {
          listeners.delete(channel)
          subscriber.unsubscribe(channel).catch(() => {})
        }
      }
    },
    close: () => subscriber.disconnect(),
  }
}

export type CourierStreams = ReturnType<typeof createCourierStreams>
