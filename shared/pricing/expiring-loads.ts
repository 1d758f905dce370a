interface Entry<V> {
  pending: Promise<V>
  /** Set once the load settles; undefined while it is in flight. */
  value?: { of: V }
  expires: number
}

/**
 * An in-memory cache whose misses load once: concurrent callers for one key share the same
 * load. An entry deleted while its load is in flight is not written back, so an invalidation
 * that arrives mid-load is never undone by a stale answer.
 */
export class ExpiringLoads<K, V> {
  private readonly entries = new Map<K, Entry<V>>()

  constructor(private readonly ttlMs: number) {}

  get(key: K, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key)
    if (hit && hit.expires > Date.now()) return hit.pending
    const entry: Entry<V> = { pending: load(), expires: Number.POSITIVE_INFINITY }
    this.entries.set(key, entry)
    entry.pending.then(
      (value) => {
        entry.value = { of: value }
        entry.expires = Date.now() + this.ttlMs
      },
      // A failed load (database down) is not remembered: the next call tries again.
      () => {
        if (this.entries.get(key) === entry) this.entries.delete(key)
      },
    )
    return entry.pending
  }

  delete(key: K): void {
    this.entries.delete(key)
  }

  /** Deletes the entries whose loaded value matches; `undefined` stands for a load still in flight. */
  deleteWhere(matches: (value: V | undefined) => boolean): void {
    for (const [key, entry] of this.entries) if (matches(entry.value?.of)) this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}
