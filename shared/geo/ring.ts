type Position = [number, number]

/**
 * Most vertices a zone's ring may have (the closing point not counted). The self-intersection
 * check compares every edge with every other, so the cap bounds an upload's cost (500: about
 * 125 000 edge pairs, a few milliseconds); a delivery zone drawn by hand needs far fewer.
 */
export const MAX_RING_VERTICES = 500

/**
 * What is wrong with a polygon ring, or null when it is a simple closed ring. Point-in-polygon
 * answers nonsense for a bow-tie or an open ring, so the importer refuses them.
 */
export function ringProblem(ring: Position[]): string | null {
  if (ring.length < 4) return 'ring needs at least 4 positions (a triangle plus the closing point)'
  // Before any check that walks the ring more than once.
  if (ring.length - 1 > MAX_RING_VERTICES) return `ring must have at most ${MAX_RING_VERTICES} vertices (this one has ${ring.length - 1})`
  const first = ring[0]
  const last = ring[ring.length - 1]
  if (first[0] !== last[0] || first[1] !== last[1]) return 'ring is not closed: the last position must repeat the first'
  const crossing = firstCrossing(ring)
  if (crossing) return `ring intersects itself (edges ${crossing[0]} and ${crossing[1]})`
  // After the crossing test: a symmetric bow-tie also has zero signed area, and crossing is the better message.
  if (Math.abs(signedArea(ring)) < 1e-12) return 'ring encloses no area'
  return null
}

/**
 * Two edges of the ring that cross or touch (neither being the other's neighbour), or null.
 * Edges are taken by their left end, and each is compared only with the edges whose x-range
 * reaches into its own and whose y-range meets it: a ring drawn around an area costs about
 * n log n, where comparing every pair cost n² (a card of 200 zones of 500 vertices took 0.3 s of
 * the console's one thread). A ring whose every edge spans it still costs n², which the vertex
 * cap bounds.
 */
function firstCrossing(ring: Position[]): [number, number] | null {
  const edges = ring.length - 1
  const left = (i: number) => Math.min(ring[i][0], ring[i + 1][0])
  const order = Array.from({ length: edges }, (_, i) => i).sort((a, b) => left(a) - left(b))
  let found: [number, number] | null = null
  for (let p = 0; p < edges; p++) {
    const i = order[p]
    const right = Math.max(ring[i][0], ring[i + 1][0])
    const bottom = Math.min(ring[i][1], ring[i + 1][1])
    const top = Math.max(ring[i][1], ring[i + 1][1])
    for (let q = p + 1; q < edges && left(order[q]) <= right; q++) {
      const j = order[q]
      // Neighbouring edges share a vertex by construction, the first and last edge included.
      if (Math.abs(i - j) === 1 || Math.abs(i - j) === edges - 1) continue
      if (Math.max(ring[j][1], ring[j + 1][1]) < bottom || Math.min(ring[j][1], ring[j + 1][1]) > top) continue
      if (!segmentsTouch(ring[i], ring[i + 1], ring[j], ring[j + 1])) continue
      // The pair named is the lowest, as the edge-by-edge walk found it, whatever order found it here.
      const pair: [number, number] = i < j ? [i, j] : [j, i]
      if (!found || pair[0] < found[0] || (pair[0] === found[0] && pair[1] < found[1])) found = pair
    }
  }
  return found
}

function signedArea(ring: Position[]): number {
  let sum = 0
  for (let i = 0; i < ring.length - 1; i++) sum += ring[i][0] * ring[i + 1][1] - ring[i + 1][0] * ring[i][1]
  return sum / 2
}

function orientation(a: Position, b: Position, c: Position): number {
  const value = (b[1] - a[1]) * (c[0] - b[0]) - (b[0] - a[0]) * (c[1] - b[1])
  return Math.abs(value) < 1e-15 ? 0 : Math.sign(value)
}

function onSegment(a: Position, b: Position, c: Position): boolean {
  return Math.min(a[0], c[0]) <= b[0] && b[0] <= Math.max(a[0], c[0]) && Math.min(a[1], c[1]) <= b[1] && b[1] <= Math.max(a[1], c[1])
}

/** True when segments p1p2 and q1q2 cross or touch, collinear overlaps included. */
function segmentsTouch(p1: Position, p2: Position, q1: Position, q2: Position): boolean {
  const o1 = orientation(p1, p2, q1)
  const o2 = orientation(p1, p2, q2)
  const o3 = orientation(q1, q2, p1)
  const o4 = orientation(q1, q2, p2)
  if (o1 !== o2 && o3 !== o4) return true
  return (o1 === 0 && onSegment(p1, q1, p2)) || (o2 === 0 && onSegment(p1, q2, p2)) || (o3 === 0 && onSegment(q1, p1, q2)) || (o4 === 0 && onSegment(q1, p2, q2))
}
