import t from 'tap'
import { roundOrder } from './report.js'

const sides = ['same-work', 'bare', 'project']
/** The side that ran just before `side` in `round`, or null when it ran first. */
const before = (side: string, round: number) => {
  const order = roundOrder(sides, round)
  return order[order.indexOf(side) - 1] ?? null
}

t.test('each round starts with the next side, the rest backwards every other round', async (t) => {
  t.same(roundOrder(sides, 0), ['same-work', 'bare', 'project'])
  t.same(roundOrder(sides, 1), ['bare', 'same-work', 'project'])
  t.same(roundOrder(sides, 2), ['project', 'same-work', 'bare'])
  t.same(roundOrder(sides, 3), ['same-work', 'project', 'bare'])
  t.same(sides, ['same-work', 'bare', 'project'], 'the list given is left as it was')
})

t.test('in three rounds the project follows each other side once and runs first once', async (t) => {
  t.same([0, 1, 2].map((round) => before('project', round)), ['bare', 'same-work', null])
  t.same([0, 1, 2].map((round) => before('same-work', round)), [null, 'bare', 'project'], 'the same-work side too')
})

t.test('two sides take turns at going first; one runs as it is', async (t) => {
  t.same([0, 1, 2, 3].map((round) => roundOrder(['bare', 'project'], round)[0]), ['bare', 'project', 'bare', 'project'])
  t.same(roundOrder(['project'], 5), ['project'])
  t.same(roundOrder([], 2), [])
})
