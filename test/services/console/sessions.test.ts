import t from 'tap'
import { LOGIN_RULE } from '../../../shared/accounts/login-rule.js'
import { claimLoginTry, issuePasswordLink } from '../../../shared/console/users.js'
import { findSession } from '../../../shared/db/console-sessions.js'
import { secretHash } from '../../../shared/secret-hash.js'
import { schemaAt, useTestDb } from '../../helpers/db.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, startConsole, TEST_PASSWORD } from '../../helpers/console.js'

// Who may hold a console session, and what an anonymous visitor costs: no session row, no
// parsed upload.
const db = await useTestDb(t)
const { app, url } = await startConsole(t, db.env)
const ada = await seedAccount(db.sql, { balance: 1000, name: 'Ada Stores' })
const operator = await consoleUser(db.sql, url, { email: 'ops@example.com', role: 'operator' })
await new ConsoleClient(app).setPassword(operator.link)

const sessionCount = async () => (await db.sql<{ n: number }[]>`select count(*)::int as n from console_sessions`)[0].n

async function businessUser(email: string) {
  const user = await consoleUser(db.sql, url, { email, role: 'business', businessId: ada.businessId })
  const client = new ConsoleClient(app)
  await client.setPassword(user.link)
  await client.logIn(user)
  const [row] = await db.sql<{ id: string }[]>`select id from console_users where email = ${email}`
  return { ...user, id: row.id, client }
}

t.test('anonymous page views, failed logins and forms write no session row; a login writes one', async (t) => {
  const before = await sessionCount()
  const visitor = new ConsoleClient(app)
  for (const path of ['/console/login', '/console', '/console/ops/businesses', '/console/set-password?token=nope', '/console/nowhere']) await visitor.get(path)
  await visitor.post('/console/login', { email: operator.email, password: 'not the password' })
  await visitor.post('/console/login', { email: 'nobody@example.com', password: 'not the password' })
  t.equal(await sessionCount(), before, 'nothing stored for a visitor')
  t.notOk(visitor.cookies.has('console_session'), 'and no session cookie handed out')
  await visitor.logIn(operator)
  t.equal(await sessionCount(), before + 1, 'the login stored its session')
  // The cookie is `<id>.<signature>`, percent-encoded; the table keeps the id's hash only.
  const sessionId = decodeURIComponent(visitor.cookies.get('console_session') ?? '').split('.')[0] ?? ''
  const stored = (await db.sql<{ id: string }[]>`select id from console_sessions`).map((row) => row.id)
  t.ok(sessionId.length >= 20 && stored.includes(secretHash(sessionId)), 'kept under the hash of its id')
  t.notOk(stored.some((idHash) => idHash.includes(sessionId)), 'and no row holds the id itself, so a read of the table replays no session')
})

t.test('a multipart upload is read only after the login and CSRF checks', async (t) => {
  // A body over the 2 MiB file limit: parsed, it would answer 413; unread, the checks answer first.
  const oversized = { field: 'file', name: 'card.json', content: 'x'.repeat(3 * 1024 * 1024) }
  const visitor = new ConsoleClient(app)
  await visitor.get('/console/login')
  const withoutToken = await visitor.postFile('/console/ops/rate-cards', oversized, null)
  t.equal(withoutToken.statusCode, 403, 'no CSRF token: refused before the body is read')
  const anonymous = await visitor.postFile('/console/ops/rate-cards', oversized)
  t.equal(anonymous.statusCode, 303, 'a valid token but no login: to the login page, body unread')
  t.match(String(anonymous.headers.location), /^\/console\/login\?next=/)

  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get('/console/ops/rate-cards')
  t.equal((await client.postFile('/console/ops/rate-cards', oversized)).statusCode, 413, 'logged in, the upload is read and its limit holds')
  const form = await client.get('/console/ops/rate-cards')
  t.match(form.body, /action="\/console\/ops\/rate-cards\?_csrf=[^"]+" enctype="multipart\/form-data"/, "the page's form carries its token in the action")
  const [{ n: audited }] = await db.sql<{ n: number }[]>`select count(*)::int as n from audit_log where action = 'ratecard.import'`
  t.equal(audited, 0, 'nothing imported')
})

t.test('at most five password checks per account per window, however many logins race', async (t) => {
  const racer = await businessUser('racer@ada.example')
  const claims = await Promise.all(Array.from({ length: 12 }, () => claimLoginTry(db.sql, 'RACER@ada.example')))
  t.equal(claims.filter((claim) => claim !== null).length, LOGIN_RULE.limit, 'five claims won, seven found the account locked')
  const [row] = await db.sql<{ locked: boolean }[]>`select locked_until > now() as locked from console_users where id = ${racer.id}`
  t.ok(row.locked)
  t.equal(await claimLoginTry(db.sql, 'nobody@ada.example'), null, 'an unknown e-mail claims nothing')
})

t.test('a disabled user is logged out everywhere and cannot log in or use a link again', async (t) => {
  const user = await businessUser('leaver@ada.example')
  const laptop = user.client
  const phone = new ConsoleClient(app)
  await phone.logIn(user)
  t.equal((await laptop.get('/console')).statusCode, 200)
  await consoleUser(db.sql, url, { email: 'other@ada.example', role: 'business', businessId: ada.businessId })

  const ops = new ConsoleClient(app)
  await ops.logIn(operator)
  const page = await ops.get(`/console/ops/businesses/${ada.businessId}`)
  t.match(page.body, /aria-label="Disable leaver@ada.example"|>Disable leaver@ada.example</)
  const disable = await ops.post(`/console/ops/businesses/${ada.businessId}/users/${user.id}/disable`)
  t.equal(disable.statusCode, 303)
  t.match((await ops.get(String(disable.headers.location))).body, /leaver@ada.example is disabled; 2 session\(s\) ended\./)

  for (const device of [laptop, phone]) {
    const after = await device.get('/console')
    t.equal(after.statusCode, 303, 'its sessions are worth nothing')
  }
  const again = new ConsoleClient(app)
  await again.get('/console/login')
  t.equal((await again.post('/console/login', { email: user.email, password: TEST_PASSWORD })).statusCode, 401, 'the right password no longer logs in')
  const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from audit_log where action = 'user.disable' and subject = ${user.email} and actor = ${operator.email}`
  t.equal(n, 1, 'audited as the operator who did it')
  t.equal((await ops.post(`/console/ops/businesses/${ada.businessId}/users/00000000-0000-4000-8000-000000000000/disable`)).statusCode, 404, 'an unknown user is not found')
  const [other] = await db.sql`select disabled_at from console_users where email = 'other@ada.example'`
  t.equal(other.disabledAt, null, 'another user of the business is untouched')
})

t.test('log out everywhere and a new password end every session of the user', async (t) => {
  const user = await businessUser('many@ada.example')
  const second = new ConsoleClient(app)
  await second.logIn(user)
  const everywhere = await user.client.post('/console/logout/everywhere')
  t.equal(everywhere.statusCode, 303)
  t.equal((await second.get('/console')).statusCode, 303, 'the other device is logged out too')
  t.equal((await user.client.get('/console')).statusCode, 303)

  await second.logIn(user)
  t.equal((await second.get('/console')).statusCode, 200)
  const [row] = await db.sql<{ id: string }[]>`select id from console_users where email = ${user.email}`
  const older = await issuePasswordLink(db.sql, row.id, url)
  const newer = await issuePasswordLink(db.sql, row.id, url)
  const stale = await new ConsoleClient(app).get(`/console/set-password?token=${new URL(older.link).searchParams.get('token')}`)
  t.equal(stale.statusCode, 404, 'a newer link spends the older one')
  await new ConsoleClient(app).setPassword(newer.link, 'a brand new long password')
  t.equal((await second.get('/console')).statusCode, 303, 'the new password ended the session the old one opened')
})

t.test('sessions open when the hashing migration runs stay open: each id becomes its hash, and expired ones go', async (t) => {
  const { sql, migrateRest } = await schemaAt(t, 33)
  await sql`insert into console_sessions (id, data, expires_at) values
    ('open-before-the-change', ${sql.json({ userId: 'u-1' })}, now() + interval '1 hour'),
    ('expired-before-the-change', ${sql.json({ userId: 'u-2' })}, now() - interval '1 hour')`
  await migrateRest()
  t.same(await findSession(sql, secretHash('open-before-the-change')), { userId: 'u-1' }, 'found by the hash of the id its cookie holds')
  t.same(await sql`select id from console_sessions`, [{ id: secretHash('open-before-the-change') }], 'the id itself is gone, and so is the expired session')
})
