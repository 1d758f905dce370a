import t from 'tap'
import { isUuid, newApiKey, newOptionId, newOrderId, newUuid } from '../../shared/ids.js'

t.test('ids have the shapes the routes, the CLI and the database expect', async (t) => {
  const uuid = newUuid()
  t.ok(isUuid(uuid), uuid)
  t.notOk(isUuid('not-a-uuid'))
  t.notOk(isUuid(`${uuid}0`), 'a longer string is not a uuid')
  t.match(newOrderId(), /^ORD-[0-9A-HJKMNP-TV-Z]{10}$/)
  t.match(newOptionId(), /^opt_[0-9A-HJKMNP-TV-Z]{12}$/)
  t.match(newApiKey(), /^ck_live_[0-9A-Za-z]{32}$/)
  const keys = new Set(Array.from({ length: 1000 }, () => newApiKey()))
  t.equal(keys.size, 1000, 'no two keys alike')
})
