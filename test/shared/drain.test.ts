import t from 'tap'
import { drainInBatches } from '../../shared/drain.js'

t.test('drainInBatches runs a step until it handles fewer rows than the batch, and adds them up', async (t) => {
  const sizes: number[] = []
  let left = 7
  const step = async (size: number) => {
    sizes.push(size)
    const handled = Math.min(size, left)
    left -= handled
    return handled
  }
  t.equal(await drainInBatches(3, step), 7, 'seven rows in all')
  t.same(sizes, [3, 3, 3], 'three steps of three: the last came back short')
  left = 6
  sizes.length = 0
  t.equal(await drainInBatches(3, step), 6, 'a backlog that fills every batch')
  t.same(sizes, [3, 3, 3], 'ends on the step that found nothing')
  await t.rejects(drainInBatches(3, async () => { throw new Error('statement timeout') }), /statement timeout/, 'a failing step fails the run, for the next sweep to try')
})
