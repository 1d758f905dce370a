import { LRUCache } from 'lru-cache'

export interface LoadCacheOptions<V> {
  /** Most entries kept; the least recently used goes first. Keys come from callers, so always bounded. */
  max: number
  ttlMs: number
  /** Whether a loaded value is kept; one that is not is returned to its callers and loaded again next time. */
  keep?: (value: V) => boolean
}

/**
 * A bounded in-memory cache whose misses load once: concurrent callers for one key share the
 * same load. A failed load is not remembered, so the next call tries again. An entry deleted
 * while its load is in flight is not written back, so an invalidation that arrives mid-load is
 * never undone by a stale answer. lru-cache keeps the settled values (bound, TTL, LRU order);
 * loads in flight are held here, so they are bounded by concurrency, not by traffic.
 */
export class LoadCache<K extends {}, V> {
  // Wrapped: lru-cache refuses null and undefined values, and "not found" is a value worth keeping.
  private readonly values: LRUCache<K, { of: V }>
  private readonly loading = new Map<K, Promise<V>>()
  private readonly keep?: (value: V) => boolean

  constructor(options: LoadCacheOptions<V>) {
    this.values = new LRUCache({ max: options.max, ttl: options.ttlMs })
    this.keep = options.keep
  }

  /** The value held for `key`, or undefined when none is: never loads. */
  peek(key: K): V | undefined {
    return this.values.get(key)?.of
  }

  get(key: K, load: () => Promise<V>): Promise<V> {
    // A load in flight is already a promise, and resolving it returns that same promise.
    return Promise.resolve(this.getOrLoad(key, load))
  }

  /**
   * The value at once when it is held, else the shared load's promise: for a hot path that
   * should not wait a microtask, nor make a promise, for what is already in memory.
   */
  getOrLoad(key: K, load: () => Promise<V>): V | Promise<V> {
    const hit = this.values.get(key)
    if (hit) return hit.of
    const inFlight = this.loading.get(key)
    if (inFlight) return inFlight
    const pending = load()
    this.loading.set(key, pending)
    pending.then(
      (value) => {
        // Gone from `loading` means deleted mid-load (or replaced): the answer may be stale.
        if (this.loading.get(key) !== pending) return
        this.loading.delete(key)
        if (!this.keep || this.keep(value)) this.values.set(key, { of: value })
      },
      () => {
        if (this.loading.get(key) === pending) this.loading.delete(key)
      },
    )
    return pending
  }

  delete(key: K): void {
    this.values.delete(key)
    this.loading.delete(key)
  }

  /** Deletes the entries whose loaded value matches; `undefined` stands for a load still in flight. */
  deleteWhere(matches: (value: V | undefined) => boolean): void {
    for (const [key, entry] of this.values.entries()) if (matches(entry.of)) this.values.delete(key)
    if (matches(undefined)) this.loading.clear()
  }

  clear(): void {
    this.values.clear()
    this.loading.clear()
  }

  get size(): number {
    return this.values.size
  }
}
