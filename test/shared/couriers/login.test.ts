import t from 'tap'
import { lockLoginFailures } from '../../../shared/db/courier-logins.js'
import { forgetSpentLoginFailures, logInCourier } from '../../../shared/couriers/login.js'
import { useTestDb } from '../../helpers/db.js'

// The courier web app's wrong-try rows (shared/couriers/login.ts): any phone typed at the login
// form makes one, so the console's sweep forgets those the rule no longer counts a try against,
// and only those.

t.test('the sweep forgets phones with nothing left in the window and no lock running, and no other', async (t) => {
  const { sql } = await useTestDb(t)
  await sql`
    insert into courier_login_failures (phone, failed_login_times, locked_until) values
      ('+2348030000001', array[now() - interval '15 minutes 1 second', now() - interval '20 minutes'], null),
      ('+2348030000002', array[now() - interval '20 minutes', now() - interval '14 minutes'], null),
      ('+2348030000003', '{}', now() - interval '1 second'),
      ('+2348030000004', '{}', now() + interval '10 minutes'),
      ('+2348030000005', '{}', null),
      ('+2348030000006', array[now() - interval '1 hour'], null)`
  // A login being checked holds its phone's row: the sweep leaves it, however old its tries.
  const inFlight = sql.begin(async (tx) => {
    await lockLoginFailures(tx, '+2348030000006')
    const forgotten = await forgetSpentLoginFailures(sql)
    return forgotten
  })
  t.equal(await inFlight, 3, 'the tries all past 15 minutes, the lock over, the row with neither')
  const left = await sql<{ phone: string }[]>`select phone from courier_login_failures order by phone`
  t.same(left.map((row) => row.phone), ['+2348030000002', '+2348030000004', '+2348030000006'], 'a try 14 minutes ago, a lock running and a row being tried stay')
  t.equal(await forgetSpentLoginFailures(sql), 1, 'the row freed by its try is forgotten at the next sweep')
})

t.test('a backlog goes a batch a statement, and a forgotten phone starts clean', async (t) => {
  const { sql } = await useTestDb(t)
  await sql`
    insert into courier_login_failures (phone, failed_login_times)
    select '+23481' || lpad(n::text, 8, '0'), array[now() - interval '1 day'] from generate_series(1, 2500) n`
  t.equal(await forgetSpentLoginFailures(sql), 2500, 'all of them, over three statements')
  t.same(await sql`select count(*)::int as count from courier_login_failures`, [{ count: 0 }])

  t.same(await logInCourier(sql, '0810 000 0001', '123456'), { kind: 'refused' }, 'an unknown phone is refused')
  t.same(await sql`select cardinality(failed_login_times) as tries, locked_until from courier_login_failures where phone = '+2348100000001'`,
    [{ tries: 1, lockedUntil: null }], 'its try counts once, from nothing')
})
