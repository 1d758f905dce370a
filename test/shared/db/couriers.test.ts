import { readFile } from 'node:fs/promises'
import t from 'tap'
import { HELD_STATUSES } from '../../../shared/orders/state-machine.js'
import { useTestDb } from '../../helpers/db.js'

// The courier queries spell the held statuses as literals so the planner can match the partial
// index `orders_courier_active`; these keep the literals, the index and HELD_STATUSES one list.
const quoted = (list: string) => [...list.matchAll(/'([a-z_]+)'/g)].map((match) => match[1])

t.test('the partial index of held orders has the statuses of HELD_STATUSES', async (t) => {
  const { sql } = await useTestDb(t)
  const [index] = await sql<{ def: string }[]>`select pg_get_indexdef(indexrelid) as def from pg_index where indexrelid = 'orders_courier_active'::regclass`
  t.ok(index, 'the index exists')
  t.same(quoted(index!.def.split(' WHERE ')[1] ?? ''), [...HELD_STATUSES])
})

t.test("every held-orders query in shared/db/couriers.ts names the statuses of HELD_STATUSES", async (t) => {
  const source = await readFile(new URL('../../../shared/db/couriers.js', import.meta.url), 'utf8')
  const lists = [...source.matchAll(/status in \(([^)]*)\)/g)].map((match) => quoted(match[1]!))
  t.ok(lists.length >= 4, `${lists.length} lists found (the comment above them included)`)
  for (const list of lists) t.same(list, [...HELD_STATUSES])
})
