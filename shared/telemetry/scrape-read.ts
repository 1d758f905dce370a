import { withDeadline } from '../deadline.js'

/**
 * How long a gauge may wait on Postgres or Redis at a scrape. The exporter waits for every
 * callback and Prometheus gives up after 10 s, so one read left waiting on a dependency that is
 * down (BullMQ's connection queues commands until Redis is back) would fail the whole scrape:
 * the service would read as down (`up == 0`), every series stale, where `courier_dependency_up`
 * should say which dependency is away.
 */
export const SCRAPE_READ_MS = 1000

/**
 * What a gauge reports for a read that failed: NaN, which Prometheus shows as a gap and no threshold
 * alert fires on (the webhook-lag SLI counts it as over, on purpose). Reporting nothing is no way out: the SDK repeats a series' last value at
 * every scrape until it is observed again, so a queue's depth or the webhook lag would read as
 * current, frozen at the moment Redis or Postgres went away (`courier_dependency_up` says which).
 */
export const UNREAD = Number.NaN

/** `read` if it answers within SCRAPE_READ_MS, else null (failed or too slow: nothing to report). */
export function readForScrape<T>(read: () => Promise<T>): Promise<T | null> {
  return withDeadline(read(), SCRAPE_READ_MS).catch(() => null)
}
