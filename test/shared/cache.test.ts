import t from 'tap'
import { LoadCache } from '../../shared/cache.js'
import { waitFor } from '../helpers/processes.js'

/** A load the test settles by hand, counting how often it was started. */
function gate<V>() {
  let calls = 0
  let settle!: { resolve: (value: V) => void; reject: (error: Error) => void }
  const load = () => {
    calls++
    return new Promise<V>((resolve, reject) => (settle = { resolve, reject }))
  }
  return { load, settle: () => settle, calls: () => calls }
}

t.test('concurrent misses share one load', async (t) => {
  const cache = new LoadCache<string, number>({ max: 10, ttlMs: 60_000 })
  const g = gate<number>()
  const both = Promise.all([cache.get('a', g.load), cache.get('a', g.load)])
  g.settle().resolve(7)
  t.same(await both, [7, 7])
  t.equal(await cache.get('a', g.load), 7, 'a settled value answers later calls')
  t.equal(g.calls(), 1)
})

t.test('getOrLoad answers a held value at once and shares a load in flight', async (t) => {
  const cache = new LoadCache<string, number | null>({ max: 10, ttlMs: 60_000 })
  const g = gate<number | null>()
  const first = cache.getOrLoad('a', g.load)
  const second = cache.getOrLoad('a', g.load)
  t.ok(first instanceof Promise, 'a miss is a promise')
  t.equal(second, first, 'a second miss waits on the same load')
  g.settle().resolve(null)
  t.equal(await first, null)
  t.equal(cache.getOrLoad('a', g.load), null, 'a held value, null included, comes back as it is, not as a promise')
  t.equal(g.calls(), 1)
})

t.test('a failed load is not remembered', async (t) => {
  const cache = new LoadCache<string, number>({ max: 10, ttlMs: 60_000 })
  await t.rejects(cache.get('a', () => Promise.reject(new Error('database down'))), { message: 'database down' })
  t.equal(await cache.get('a', async () => 2), 2, 'the next call loads again')
})

t.test('an entry deleted while its load is in flight is not written back', async (t) => {
  const cache = new LoadCache<string, string>({ max: 10, ttlMs: 60_000 })
  const g = gate<string>()
  const first = cache.get('a', g.load)
  cache.delete('a')
  g.settle().resolve('stale')
  t.equal(await first, 'stale', 'the caller that started the load still gets its answer')
  t.equal(await cache.get('a', async () => 'fresh'), 'fresh', 'the stale answer was not kept')

  const h = gate<string>()
  const second = cache.get('b', h.load)
  cache.deleteWhere((value) => value === undefined)
  h.settle().resolve('stale')
  await second
  t.equal(await cache.get('b', async () => 'fresh'), 'fresh', 'deleteWhere drops loads in flight too')
})

t.test('deleteWhere drops only the matching values', async (t) => {
  const cache = new LoadCache<string, string>({ max: 10, ttlMs: 60_000 })
  await cache.get('a', async () => 'card-1')
  await cache.get('b', async () => 'card-2')
  cache.deleteWhere((value) => value === 'card-1')
  t.equal(await cache.get('a', async () => 'reloaded'), 'reloaded')
  t.equal(await cache.get('b', async () => 'reloaded'), 'card-2')
})

t.test('the cache holds at most max entries, dropping the least recently used', async (t) => {
  const cache = new LoadCache<number, number>({ max: 3, ttlMs: 60_000 })
  for (let key = 0; key < 100; key++) await cache.get(key, async () => key)
  t.equal(cache.size, 3)
  t.equal(await cache.get(0, async () => -1), -1, 'the oldest was evicted')
  t.equal(await cache.get(99, async () => -1), 99, 'the newest is kept')
})

t.test('a value expires after its TTL', async (t) => {
  const cache = new LoadCache<string, number>({ max: 10, ttlMs: 20 })
  await cache.get('a', async () => 1)
  t.equal(await cache.get('a', async () => 2), 1, 'fresh within the TTL')
  t.ok(await waitFor(async () => (await cache.get('a', async () => 2)) === 2, 10_000, 10), 'loaded again once expired')
})

t.test('keep decides which loaded values are held; peek never loads', async (t) => {
  const cache = new LoadCache<string, string | null>({ max: 10, ttlMs: 60_000, keep: (value) => value !== null })
  t.equal(await cache.get('known', async () => 'caller'), 'caller')
  t.equal(await cache.get('unknown', async () => null), null, 'a value not kept is still answered')
  t.equal(cache.peek('known'), 'caller')
  t.equal(cache.peek('unknown'), undefined, 'and not held')
  t.equal(await cache.get('unknown', async () => 'now known'), 'now known', 'so the next call loads again')
  t.equal(await cache.get('known', async () => 'reloaded'), 'caller', 'the kept value is still held')
})
