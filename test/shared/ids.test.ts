import t from 'tap'
import { isEventId, isUuid, newApiKey, newEventId, newOptionId, newOrderId, newTrackingToken, newUuid } from '../../shared/ids.js'

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

t.test('ids drawn from the byte pool stay well formed and distinct across its refills', async (t) => {
  // 2000 event ids use 40 000 bytes: the 4 KB pool is refilled nine times along the way.
  const ids = Array.from({ length: 2000 }, () => newEventId())
  t.ok(ids.every((id) => isEventId(id)), 'every one has the event id shape')
  t.equal(new Set(ids).size, ids.length, 'no two alike')
  // Every Crockford character turns up at each position: the bytes are not reused or stuck.
  for (const position of [4, 13, 23]) {
    t.equal(new Set(ids.map((id) => id[position])).size, 32, `all 32 characters at position ${position}`)
  }
})

t.test('tracking tokens from the pool: 128 bits, URL-safe, never two alike, whatever ids are drawn between', async (t) => {
  // 1000 tokens and 1000 order ids interleaved use 26 000 bytes: six refills, at offsets no token aligns with.
  const tokens = Array.from({ length: 1000 }, () => {
    newOrderId()
    return newTrackingToken()
  })
  t.ok(tokens.every((token) => /^[A-Za-z0-9_-]{22}$/.test(token)), 'each is 22 base64url characters')
  t.equal(new Set(tokens).size, tokens.length, 'no two alike')
  t.ok(tokens.every((token) => Buffer.from(token, 'base64url').length === 16), 'each decodes to 16 bytes')
})
