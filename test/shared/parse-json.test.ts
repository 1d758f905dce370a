import t from 'tap'
import { z } from 'zod'
import { parseJsonAs } from '../../shared/parse-json.js'

t.test('JSON another process wrote is read through a schema, or is null, and never throws', async (t) => {
  const shape = z.object({ kind: z.literal('rate-card'), rateCardId: z.string() })
  t.same(parseJsonAs(shape, '{"kind":"rate-card","rateCardId":"rc_1"}'), { kind: 'rate-card', rateCardId: 'rc_1' })
  t.equal(parseJsonAs(shape, 'not json'), null, 'not JSON')
  t.equal(parseJsonAs(shape, ''), null, 'empty')
  t.equal(parseJsonAs(shape, '{"kind":"rate-card"}'), null, 'a field missing')
  t.equal(parseJsonAs(shape, '{"kind":"business","rateCardId":"rc_1"}'), null, 'another kind')
})
