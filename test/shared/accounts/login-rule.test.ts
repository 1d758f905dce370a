import assert from 'node:assert/strict'
import fc from 'fast-check'
import t from 'tap'
import { claimTry, LOGIN_RULE } from '../../../shared/accounts/login-rule.js'
import { claimLoginTry } from '../../../shared/console/users.js'
import type { LoginFailures } from '../../../shared/courier.js'
import { schemaAt } from '../../helpers/db.js'

// The login lock of console accounts and courier phones (DESIGN 12 and 14): five failed logins
// within any 15 minutes lock for 15. Each try is claimed on what the one before it saved, as the
// repositories do under the row's lock; the last test is migration 00027, which brought the rule
// its times.

const MINUTE = 60_000
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0)
const CLEAN: LoginFailures = { failedLoginTimes: [], lockedUntil: null }

type Outcome = 'refused' | 'counted' | 'locks'

/** Wrong tries at these times, in order: what each claim came to, and the lock's end when one locked. */
function failAt(times: number[]): { outcome: Outcome; lockedUntil: number | null; kept: number }[] {
  let current = CLEAN
  return times.map((at) => {
    const claim = claimTry(current, at)
    if (claim === null) return { outcome: 'refused', lockedUntil: null, kept: current.failedLoginTimes.length }
    current = claim
    return { outcome: claim.lockedUntil === null ? 'counted' : 'locks', lockedUntil: claim.lockedUntil?.getTime() ?? null, kept: claim.failedLoginTimes.length }
  })
}

const outcomes = (times: number[]) => failAt(times).map((claim) => claim.outcome)

t.test("DESIGN 12's numbers: five failures, a 15-minute window, a 15-minute lock", async (t) => {
  t.same(LOGIN_RULE, { limit: 5, windowS: 15 * 60, lockS: 15 * 60 })
})

t.test('four failures at the end of one 15 minutes and four at the start of the next lock: the window slides', async (t) => {
  const before = [0, 1, 2, 3].map((minutes) => T0 + minutes * MINUTE)
  const after = [1, 2, 3, 4].map((seconds) => T0 + 15 * MINUTE + seconds * 1000)
  const claims = failAt([...before, ...after])
  t.same(claims.map((claim) => claim.outcome), ['counted', 'counted', 'counted', 'counted', 'counted', 'locks', 'refused', 'refused'],
    'the first failure leaves the window, the three after it stay: the second try past 15 minutes is the fifth within 15 minutes, and locks')
  t.equal(claims[5]!.lockedUntil, after[1]! + 15 * MINUTE, 'for 15 minutes from that try')
  t.equal(claims[4]!.kept, 4, 'the try just past 15 minutes counts the three failures still in the window and itself')
})

t.test('the fifth failure in a row is still checked and locks; the lock ends after 15 minutes and starts clean', async (t) => {
  const burst = [0, 1, 2, 3, 4].map((seconds) => T0 + seconds * 1000)
  const lockEnds = burst[4]! + 15 * MINUTE
  t.same(outcomes([...burst, lockEnds - 1]), ['counted', 'counted', 'counted', 'counted', 'locks', 'refused'])
  const claims = failAt([...burst, lockEnds, lockEnds + 1, lockEnds + 2, lockEnds + 3, lockEnds + 4])
  t.same(claims.slice(5).map((claim) => claim.outcome), ['counted', 'counted', 'counted', 'counted', 'locks'], 'after the lock, five more failures to the next one')
  t.equal(claims[5]!.kept, 1, 'the lock cleared the failures before it')
})

t.test('a failure counts for 15 minutes, not one millisecond more', async (t) => {
  const four = [0, 0, 0, 0].map((offset) => T0 + offset)
  t.same(outcomes([...four, T0 + 15 * MINUTE - 1]).at(-1), 'locks', 'a millisecond inside the window')
  t.same(outcomes([...four, T0 + 15 * MINUTE]).at(-1), 'counted', '15 minutes on, the four have left it')
})

/**
 * The rule as DESIGN 12 words it, over every try so far and kept apart from the code: a try while
 * locked is refused; any other is counted, and locks when it is the fifth counted within the 15
 * minutes up to it.
 */
function byTheRule(times: number[]): Outcome[] {
  const counted: number[] = []
  let lockedUntil = -Infinity
  return times.map((at) => {
    if (at < lockedUntil) return 'refused'
    counted.push(at)
    if (counted.filter((earlier) => earlier > at - LOGIN_RULE.windowS * 1000).length < LOGIN_RULE.limit) return 'counted'
    lockedUntil = at + LOGIN_RULE.lockS * 1000
    return 'locks'
  })
}

t.test('any run of wrong tries: claimTry refuses and locks exactly as the rule says, keeping fewer than five times', async (t) => {
  // Gaps from racing tries (0 ms) to a quarter of an hour and more, mostly minutes.
  const gap = fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 6, arbitrary: fc.integer({ min: 1, max: 6 * MINUTE }) }, { weight: 1, arbitrary: fc.integer({ min: 6 * MINUTE, max: 20 * MINUTE }) })
  fc.assert(fc.property(fc.array(gap, { minLength: 1, maxLength: 40 }), (gaps) => {
    const times = gaps.map((_, i) => T0 + gaps.slice(0, i + 1).reduce((sum, ms) => sum + ms, 0))
    const claims = failAt(times)
    assert.deepEqual(claims.map((claim) => claim.outcome), byTheRule(times))
    claims.forEach((claim, i) => {
      if (claim.outcome === 'locks') assert.equal(claim.lockedUntil, times[i]! + LOGIN_RULE.lockS * 1000, 'a lock lasts 15 minutes')
      assert.ok(claim.kept < LOGIN_RULE.limit, 'at most four times are kept')
      const checked = times.filter((at, j) => claims[j]!.outcome !== 'refused' && at <= times[i]! && at > times[i]! - LOGIN_RULE.windowS * 1000)
      assert.ok(checked.length <= LOGIN_RULE.limit, 'at most five secrets checked within any 15 minutes')
    })
  }), { numRuns: 300 })
  t.pass('300 runs of up to 40 tries')
})

t.test('migration 00027 carries the failures counted so far over as times, each at its window\'s start', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, 26)
  const since = new Date(Date.now() - 5 * MINUTE)
  await sql`insert into console_users (id, email, role, failed_logins, failures_since) values
    ('00000000-0000-4000-8000-000000000001', 'three@example.com', 'operator', 3, ${since}),
    ('00000000-0000-4000-8000-000000000002', 'none@example.com', 'operator', 0, null)`
  await sql`insert into courier_login_failures (phone, failed_logins, failures_since) values ('+2348090000001', 2, ${since}), ('+2348090000002', 0, null)`
  await migrateRest()

  const users = await sql<{ email: string; failedLoginTimes: Date[] }[]>`select email, failed_login_times from console_users order by email`
  t.same(users.map((row) => [row.email, row.failedLoginTimes]), [['none@example.com', []], ['three@example.com', [since, since, since]]])
  const phones = await sql<{ phone: string; failedLoginTimes: Date[] }[]>`select phone, failed_login_times from courier_login_failures order by phone`
  t.same(phones.map((row) => [row.phone, row.failedLoginTimes]), [['+2348090000001', [since, since]], ['+2348090000002', []]])

  t.not(await claimLoginTry(sql, 'three@example.com'), null, 'the fourth failure is checked')
  t.not(await claimLoginTry(sql, 'three@example.com'), null, 'and the fifth')
  t.equal(await claimLoginTry(sql, 'three@example.com'), null, 'which locked the account, counting the three from before the migration')
})

t.test('pods whose clocks disagree count on one clock: four failures on a pod 20 minutes slow and a fifth on time lock', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, null)
  await migrateRest()
  await sql`insert into console_users (id, email, role) values ('00000000-0000-4000-8000-000000000003', 'skew@example.com', 'operator')`
  const realNow = Date.now
  Date.now = () => realNow() - 20 * MINUTE
  t.teardown(() => { Date.now = realNow })
  for (let i = 0; i < 4; i++) t.not(await claimLoginTry(sql, 'skew@example.com'), null, `failure ${i + 1}, counted by the slow pod`)
  Date.now = realNow
  const fifth = await claimLoginTry(sql, 'skew@example.com')
  t.ok(fifth && fifth.lockedUntil !== null, 'the fifth, on a pod on time, is checked and locks: the four are within its 15 minutes')
  t.equal(await claimLoginTry(sql, 'skew@example.com'), null, 'and the next is refused')
})
