import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { pricingEnv, loadConfig } from '../../shared/config.js'
import { geocodeCacheTable } from '../../shared/db/geocode-cache.js'
import { createGeocoder, type Geocoder } from '../../shared/geo/geocoder.js'
import { findState, locateInGazetteer } from '../../shared/geo/gazetteer.js'
import { resolveEnds } from '../../shared/geo/locate.js'
import { DISTRICTS, STATES } from '../../shared/geo/places.js'
import { MAX_RING_VERTICES, ringProblem } from '../../shared/geo/ring.js'
import { haversineKm } from '../../shared/pricing/distance.js'
import type { Point } from '../../shared/courier.js'
import { genericPlanOf, useTestDb } from '../helpers/db.js'

const near = (found: Point | null, lat: number, lng: number, km = 3) => found !== null && haversineKm(found, { lat, lng }) < km

t.test('gazetteer covers 36 states and the FCT, all inside Nigeria', async (t) => {
  t.equal(STATES.length, 37)
  for (const place of [...STATES, ...DISTRICTS]) {
    t.ok(place.at.lat > 4 && place.at.lat < 14 && place.at.lng > 2.6 && place.at.lng < 14.7, `${place.names[0]} lies in Nigeria`)
  }
})

t.test('gazetteer: most specific match first', async (t) => {
  t.ok(near(locateInGazetteer('12 Admiralty Way, Lekki Phase 1, Lagos'), 6.4474, 3.4736), 'district beats the state it names')
  t.ok(near(locateInGazetteer('Plot 5, Adeola Odeku Street, Victoria Island'), 6.4281, 3.4219), 'two-word district')
  t.ok(near(locateInGazetteer('3 Allen Avenue, IKEJA GRA'), 6.578, 3.353, 1), 'the longer district name wins, case-insensitive')
  t.ok(near(locateInGazetteer('14 Herbert Macaulay Way, Yaba'), 6.5095, 3.3711))
  t.ok(near(locateInGazetteer('Plot 1, Aba Road, GRA, Port Harcourt'), 4.816, 6.999), 'GRA of the city the text names')
  t.ok(near(locateInGazetteer('Plot 1 GRA', 'Rivers State'), 4.816, 6.999), 'a separate state narrows the districts')
  t.same(locateInGazetteer('Plot 1 GRA', 'Lagos'), STATES.find((place) => place.state === 'Lagos')!.at, 'no Lagos district matched: the Lagos state point, not Rivers GRA')
  t.ok(near(locateInGazetteer('Suite 4, Wuse 2, Abuja'), 9.0765, 7.4683))
  t.ok(near(locateInGazetteer('D-Line, Port Harcourt'), 4.801, 6.999), 'punctuation counts as a word break')
  t.ok(near(locateInGazetteer('22 Zoo Road, Kano'), 12.0022, 8.592), 'a state by its capital')
  t.ok(near(locateInGazetteer('No 4 Bodija, Ibadan, Oyo State'), 7.3775, 3.947))
  t.ok(near(locateInGazetteer('15 Somewhere Street', 'FCT'), 9.0579, 7.4951), 'the state field alone places the address')
  t.equal(locateInGazetteer('Yabatech hostel'), null, 'whole words only: Yabatech is not Yaba')
  t.equal(locateInGazetteer('1600 Amphitheatre Parkway, Mountain View'), null, 'unknown address')
  t.equal(findState('lagos state')?.state, 'Lagos')
  t.equal(findState('Abuja')?.state, 'FCT')
  t.equal(findState('Atlantis'), undefined)
})

t.test('resolveEnds: coordinates first, geocoding only for an end without a full pair', async (t) => {
  const asked: string[] = []
  const geocoder: Geocoder = {
    async locate(address) {
      asked.push(address)
      return address.includes('Yaba') ? { lat: 6.5, lng: 3.37 } : null
    },
  }
  const base = { pickup_address: 'Yaba', dropoff_address: 'unknown place' }
  t.same(await resolveEnds({ ...base, pickup_latitude: 1, pickup_longitude: 2, dropoff_latitude: 3, dropoff_longitude: 4 }, geocoder), { pickup: { lat: 1, lng: 2 }, dropoff: { lat: 3, lng: 4 } })
  t.same(asked, [], 'all four coordinates skip geocoding')
  t.same(await resolveEnds({ ...base, dropoff_latitude: 3, dropoff_longitude: 4 }, geocoder), { pickup: { lat: 6.5, lng: 3.37 }, dropoff: { lat: 3, lng: 4 } })
  t.same(asked, ['Yaba'], 'only the end without coordinates is geocoded')
  await t.rejects(resolveEnds(base, geocoder), { name: 'PricingError', message: 'dropoff_address could not be located; send dropoff_latitude and dropoff_longitude' })
  await t.rejects(resolveEnds({ pickup_address: 'nowhere', dropoff_address: 'Yaba', pickup_latitude: 5 }, geocoder), { message: 'pickup_address could not be located; send pickup_latitude and pickup_longitude' }, 'a latitude alone is not a pair')
})

t.test('nominatim geocoder: query, user agent, table cache shared by processes, gazetteer on failure', async (t) => {
  const { sql, env } = await useTestDb(t)
  const requests: URL[] = []
  let agent = ''
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    requests.push(url)
    agent = String(req.headers['user-agent'])
    res.setHeader('content-type', 'application/json')
    if (url.searchParams.get('q')?.startsWith('Down')) return void (res.statusCode = 503, res.end('[]'))
    res.end(url.searchParams.get('q')?.startsWith('7 Broad') ? '[{"lat":"6.4520","lon":"3.3890"}]' : '[]')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const config = loadConfig(pricingEnv, { ...env, GEOCODER: 'nominatim', NOMINATIM_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, GEOCODER_TIMEOUT_MS: '1000' })

  const first = createGeocoder(config, geocodeCacheTable(sql, config.GEOCODE_CACHE_TTL_S))
  t.same(await first.locate('7 Broad Street', 'Lagos'), { lat: 6.452, lng: 3.389 })
  t.equal(requests[0].searchParams.get('countrycodes'), 'ng')
  t.equal(requests[0].searchParams.get('q'), '7 Broad Street, Lagos, Nigeria')
  t.match(agent, /courier/)
  await first.locate('7 Broad Street', 'Lagos')
  t.equal(requests.length, 1, 'the in-memory cache answers a repeat')
  const [row] = await sql`select latitude, longitude from geocode_cache`
  t.same(row, { latitude: 6.452, longitude: 3.389 })
  t.same(await createGeocoder(config, geocodeCacheTable(sql, config.GEOCODE_CACHE_TTL_S)).locate('7 Broad Street', 'Lagos'), { lat: 6.452, lng: 3.389 }, 'another process reads the table')
  t.equal(requests.length, 1)

  t.ok(near(await first.locate('Down the road, Surulere'), 6.5, 3.35), 'a failing provider falls back to the gazetteer')
  t.equal(await first.locate('Unknown lane 4'), null)
})

t.test('geocode_cache rows expire: an expired row is never read, and a later store deletes it', async (t) => {
  const { sql } = await useTestDb(t)
  const places = geocodeCacheTable(sql, 3600)
  await sql`insert into geocode_cache (query, latitude, longitude, created_at) values ('old|', 6.1, 3.1, now() - interval '2 hours')`
  t.equal(await places.find('old|'), null, 'a row older than the TTL is not an answer')
  await places.store('new|', { lat: 6.2, lng: 3.2 })
  t.same(await places.find('new|'), { lat: 6.2, lng: 3.2 })
  const rows = await sql<{ query: string }[]>`select query from geocode_cache order by query`
  t.same(rows.map((row) => row.query), ['new|'], 'the store removed the expired row')
})

t.test('a store finds the expired rows by their index, not by reading the whole cache', async (t) => {
  const { sql, config } = await useTestDb(t)
  await sql`insert into geocode_cache (query, latitude, longitude) select 'street ' || n || '|', 6.4, 3.4 from generate_series(1, 5000) n`
  await sql`analyze geocode_cache`
  // The store's last statement is the expiry's delete (migration 00032).
  const plan = await genericPlanOf(t, config, (db) => geocodeCacheTable(db, 3600).store('new|', { lat: 6.2, lng: 3.2 }))
  t.match(plan, /"Index Name":"geocode_cache_created"/)
})

t.test('a ring is capped at MAX_RING_VERTICES vertices, the closing point not counted', async (t) => {
  const circle = (vertices: number): [number, number][] => {
    const ring = Array.from({ length: vertices }, (_, i): [number, number] => [3.42 + 0.03 * Math.cos((2 * Math.PI * i) / vertices), 6.44 + 0.03 * Math.sin((2 * Math.PI * i) / vertices)])
    return [...ring, ring[0]]
  }
  t.equal(MAX_RING_VERTICES, 500)
  t.equal(ringProblem(circle(500)), null, 'at the cap: a simple ring')
  t.equal(ringProblem(circle(501)), 'ring must have at most 500 vertices (this one has 501)')
  t.equal(ringProblem(circle(10_000)), 'ring must have at most 500 vertices (this one has 10000)', 'refused before the edge-by-edge check')
})

t.test('the self-intersection check names the same crossing as comparing every pair of edges', async (t) => {
  // The reference: every edge against every other, as the check was first written.
  const orientation = (a: number[], b: number[], c: number[]) => {
    const value = (b[1]! - a[1]!) * (c[0]! - b[0]!) - (b[0]! - a[0]!) * (c[1]! - b[1]!)
    return Math.abs(value) < 1e-15 ? 0 : Math.sign(value)
  }
  const on = (a: number[], b: number[], c: number[]) => Math.min(a[0]!, c[0]!) <= b[0]! && b[0]! <= Math.max(a[0]!, c[0]!) && Math.min(a[1]!, c[1]!) <= b[1]! && b[1]! <= Math.max(a[1]!, c[1]!)
  const touch = (p1: number[], p2: number[], q1: number[], q2: number[]) => {
    const [o1, o2, o3, o4] = [orientation(p1, p2, q1), orientation(p1, p2, q2), orientation(q1, q2, p1), orientation(q1, q2, p2)]
    return (o1 !== o2 && o3 !== o4) || (o1 === 0 && on(p1, q1, p2)) || (o2 === 0 && on(p1, q2, p2)) || (o3 === 0 && on(q1, p1, q2)) || (o4 === 0 && on(q1, p2, q2))
  }
  const everyPair = (ring: [number, number][]): string | null => {
    const edges = ring.length - 1
    for (let i = 0; i < edges; i++) {
      for (let j = i + 1; j < edges; j++) {
        if (j === i + 1 || (i === 0 && j === edges - 1)) continue
        if (touch(ring[i]!, ring[i + 1]!, ring[j]!, ring[j + 1]!)) return `ring intersects itself (edges ${i} and ${j})`
      }
    }
    return null
  }
  // A seeded generator, so a failure can be replayed: rings on a small grid (shared x and y values,
  // collinear and touching edges) and rings around a centre (simple, or with a spike across).
  let seed = 42
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  let crossing = 0
  for (let round = 0; round < 3000; round++) {
    const vertices = 3 + Math.floor(random() * 12)
    const points: [number, number][] = round % 2 === 0
      ? Array.from({ length: vertices }, () => [Math.floor(random() * 6), Math.floor(random() * 6)])
      : Array.from({ length: vertices }, (_, i) => {
        const angle = (2 * Math.PI * i) / vertices, radius = random() < 0.1 ? 3 : 1 + random()
        return [Math.cos(angle) * radius, Math.sin(angle) * radius]
      })
    const ring: [number, number][] = [...points, points[0]!]
    const expected = everyPair(ring)
    const problem = ringProblem(ring)
    if (expected) crossing++
    if (expected ? problem !== expected : problem?.startsWith('ring intersects itself')) {
      t.fail(`round ${round}: ${JSON.stringify(ring)}: expected ${expected}, got ${problem}`)
      return
    }
  }
  t.ok(crossing > 300 && crossing < 2700, `both kinds were tried (${crossing} of 3000 rings cross)`)
})
