import type { Queue } from 'bullmq'
import type { ConsoleConfig } from '../../shared/config.js'
import type { Sql } from '../../shared/db/sql.js'
import type { DispatchQueue } from '../../shared/dispatch/queue.js'
import type { Invalidation } from '../../shared/invalidation.js'
import type { RedisClient } from '../../shared/redis.js'
import type { PhotoStore } from '../../shared/storage/photos.js'
import type { WebhookJob } from '../../shared/webhooks/queue.js'

/** What the console's route plugins are given. */
export interface ConsoleDeps {
  sql: Sql
  /**
   * Lists, statements, logs and counts read here: a replica when DATABASE_READ_URL is set, so
   * they may lag a change just made by its replay lag; one record is always read on `sql`.
   */
  reads: Sql
  config: ConsoleConfig
  /** Publishes a cache invalidation after a commit; never throws. */
  announce(message: Invalidation): Promise<void>
  /** Redeliveries go straight to the webhook sender's queue. */
  webhooks: Queue<WebhookJob>
  /** Where couriers are and whether they are on shift (the courier app's shift and location steps write it); without an offline queue, so a down Redis fails fast. */
  redis: RedisClient
  /** The courier web app's steps tell the dispatcher to look again (an offer declined, a courier free). */
  dispatch: DispatchQueue
  /** Delivery photos: the courier app stores them, a business's order page shows its own. */
  photos: PhotoStore
}
