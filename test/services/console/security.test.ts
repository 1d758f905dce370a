import { loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import { createSecretBox } from '../../../shared/webhooks/secret-box.js'
import t from 'tap'
import { useTestDb } from '../../helpers/db.js'
import { startSilentServer } from '../../helpers/processes.js'
import { seedAccount } from '../../helpers/accounts.js'
import { ConsoleClient, consoleUser, seedOrder, startConsole, TEST_PASSWORD } from '../../helpers/console.js'
import { clearLoginFailures } from '../../../shared/db/console-users.js'
import { findWallet } from '../../../shared/db/wallets.js'
import { findEndpoint } from '../../../shared/db/webhooks.js'
import { createEndpoint } from '../../../shared/webhooks/endpoints.js'

const db = await useTestDb(t)
const { app, url } = await startConsole(t, db.env)
const ada = await seedAccount(db.sql, { balance: 1000, name: 'Ada Stores' })
const bola = await seedAccount(db.sql, { balance: 1000, name: 'Bola Foods' })
const operator = await consoleUser(db.sql, url, { email: 'ops@example.com', role: 'operator' })
const adaUser = await consoleUser(db.sql, url, { email: 'owner@ada.example', role: 'business', businessId: ada.businessId })
await new ConsoleClient(app).setPassword(operator.link)
await new ConsoleClient(app).setPassword(adaUser.link)

t.test('a form posted without its CSRF token is refused and changes nothing', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get(`/console/ops/businesses/${ada.businessId}`)
  const before = (await findWallet(db.sql, ada.businessId))?.balance
  const missing = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { _csrf: null, amount: '500', reference: 'csrf-1', mode: 'live' })
  t.equal(missing.statusCode, 403)
  t.match(missing.body, /This form has expired or did not come from the console/)
  const forged = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { _csrf: 'forged-token', amount: '500', reference: 'csrf-2', mode: 'live' })
  t.equal(forged.statusCode, 403)
  t.equal((await findWallet(db.sql, ada.businessId))?.balance, before, 'the wallet did not move')
  // Another session's token is no good here either.
  const other = new ConsoleClient(app)
  await other.get('/console/login')
  const borrowed = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { _csrf: other.csrf, amount: '500', reference: 'csrf-3', mode: 'live' })
  t.equal(borrowed.statusCode, 403)
  const loginWithout = await new ConsoleClient(app).post('/console/login', { _csrf: null, email: operator.email, password: TEST_PASSWORD })
  t.equal(loginWithout.statusCode, 403, 'the login form carries a token too')
})

t.test('a token and secret planted from another site of the domain are refused on a logged-in user\'s form', async (t) => {
  // The attacker's own pair, valid and signed: from the login page, as anyone gets one.
  const attacker = new ConsoleClient(app)
  await attacker.get('/console/login')
  const plantedSecret = attacker.cookies.get('console_csrf')
  t.ok(plantedSecret && attacker.csrf, 'an anonymous visitor gets a secret and a token')
  // A business of its own: the other tests read Ada's balance.
  const carol = await seedAccount(db.sql, { balance: 1000, name: 'Carol Goods' })
  const victim = new ConsoleClient(app)
  await victim.logIn(operator)
  await victim.get(`/console/ops/businesses/${carol.businessId}`)
  const before = (await findWallet(db.sql, carol.businessId))?.balance
  // A cookie set with Domain= the parent by a sibling site replaces the victim's own secret.
  victim.cookies.set('console_csrf', plantedSecret!)
  const forged = await victim.post(`/console/ops/businesses/${carol.businessId}/credit`, { _csrf: attacker.csrf, amount: '500', reference: 'planted-1', mode: 'live' })
  t.equal(forged.statusCode, 403, 'the token was made for nobody, and this session is the operator\'s')
  t.equal((await findWallet(db.sql, carol.businessId))?.balance, before, 'the wallet did not move')
  // The victim's own next page makes a token for them on that same secret, which works.
  await victim.get(`/console/ops/businesses/${carol.businessId}`)
  const own = await victim.post(`/console/ops/businesses/${carol.businessId}/credit`, { amount: '5', reference: 'planted-2', mode: 'live' })
  t.equal(own.statusCode, 303, 'a token made for the operator passes')
})

t.test('the cookies are HttpOnly, SameSite=Lax, scoped to /console, and Secure unless on http://localhost', async (t) => {
  const client = new ConsoleClient(app)
  const page = await client.get('/console/login')
  const csrfCookie = String(page.headers['set-cookie'])
  t.match(csrfCookie, /^console_csrf=[^;]+\.[^;]+;/, 'the form page sets only the signed CSRF cookie')
  const login = await client.post('/console/login', { email: operator.email, password: TEST_PASSWORD })
  const sessionCookie = [login.headers['set-cookie']].flat().map(String).find((line) => line.startsWith('console_session=')) ?? ''
  for (const cookie of [csrfCookie, sessionCookie]) {
    t.match(cookie, /HttpOnly/)
    t.match(cookie, /SameSite=Lax/)
    t.match(cookie, /Path=\/console/)
    t.notMatch(cookie, /Secure/, 'plain http://localhost has no TLS to require')
  }

  const { app: tls } = await startConsole(t, db.env, { CONSOLE_PUBLIC_URL: 'https://console.example.com', TRUST_PROXY: 'true' })
  const secure = await new ConsoleClient(tls).get('/console/login', { 'x-forwarded-proto': 'https' })
  t.match(String(secure.headers['set-cookie']), /; Secure/)
  t.match(String(secure.headers['strict-transport-security']), /max-age=/)
  t.match(String(secure.headers['content-security-policy']), /script-src 'none'/)
})

t.test('a path the router cannot read gets the not-found page with every security header', async (t) => {
  const { app: tls } = await startConsole(t, db.env, { CONSOLE_PUBLIC_URL: 'https://console.example.com', TRUST_PROXY: 'true' })
  const known = await new ConsoleClient(tls).get('/console/no-such-page', { 'x-forwarded-proto': 'https' })
  t.equal(known.statusCode, 404, 'an unknown address, for comparison')
  // A tracking token past the router's 100 characters, and percent-encoding that decodes to nothing.
  for (const path of [`/t/${'a'.repeat(150)}`, `/console/orders/${'9'.repeat(300)}`, '/console/orders/%E0%A4%A', '/t/%ZZ']) {
    const answer = await new ConsoleClient(tls).get(path, { 'x-forwarded-proto': 'https' })
    t.equal(answer.statusCode, 404, `${path.slice(0, 40)}: 404`)
    t.match(String(answer.headers['content-type']), /^text\/html/, 'the console\'s page, not fastify\'s JSON')
    t.match(answer.body, /There is nothing at this address, or you are not logged in/)
    for (const header of ['content-security-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options']) {
      t.equal(answer.headers[header], known.headers[header], `${header} as on any page`)
    }
  }
})

t.test('an address with a trailing slash leads to the page without it, and never off the console', async (t) => {
  const client = new ConsoleClient(app)
  for (const [typed, page] of [['/console/', '/console'], ['/console/?status=created&page=2', '/console?status=created&page=2'], ['/courier/', '/courier']]) {
    const answer = await client.get(typed!)
    t.equal(answer.statusCode, 308, `${typed}: redirected`)
    t.equal(answer.headers.location, page, `to ${page}`)
  }
  t.equal((await client.get('/console')).headers.location, '/console/login?next=%2Fconsole', 'the console, which asks for a login first')
  // Paths a browser would read as another site's address once their slash went: no redirect at all.
  for (const typed of ['//evil.example/', '/\\evil.example/', '/%2F%2Fevil.example/', '/console//']) {
    const answer = await client.get(typed)
    t.equal(answer.statusCode, 404, `${typed}: the not-found page`)
    t.equal(answer.headers.location, undefined, 'no Location')
  }
})

t.test('five failed logins lock the account for 15 minutes, even against the right password, and the answer never says so', async (t) => {
  const user = await consoleUser(db.sql, url, { email: 'locked@ada.example', role: 'business', businessId: ada.businessId })
  const client = new ConsoleClient(app)
  await client.setPassword(user.link)
  await client.logIn(user)
  await client.post('/console/logout')
  const answers = []
  for (let attempt = 1; attempt <= 5; attempt++) {
    await client.get('/console/login')
    answers.push((await client.post('/console/login', { email: user.email, password: 'wrong password!!' })).statusCode)
  }
  t.same(answers, [401, 401, 401, 401, 401], 'the fifth failure locks, answered as any other')
  await client.get('/console/login')
  const right = await client.post('/console/login', { email: user.email, password: TEST_PASSWORD })
  t.equal(right.statusCode, 401, 'the right password does not open a locked account')
  t.equal(right.headers['retry-after'], undefined, 'nothing tells a locked account from a wrong password')
  const refusal = /<p class="error" role="alert" id="login-error">([^<]+)<\/p>/
  t.equal(refusal.exec(right.body)?.[1], 'The email or password is wrong, or the account is locked for 15 minutes after 5 failed logins.')
  const [{ lockedFor }] = await db.sql<{ lockedFor: number }[]>`select extract(epoch from locked_until - now())::int as locked_for from console_users where email = ${user.email}`
  t.ok(lockedFor > 14 * 60 && lockedFor <= 15 * 60, `locked for 15 minutes (${lockedFor} s)`)

  // The lock over (its end moved into the past), the right password works again.
  await db.sql`update console_users set locked_until = now() - interval '1 second' where email = ${user.email}`
  await client.get('/console/login')
  t.equal((await client.post('/console/login', { email: user.email, password: TEST_PASSWORD })).statusCode, 303)

  const unknown = new ConsoleClient(app)
  await unknown.get('/console/login')
  const answer = await unknown.post('/console/login', { email: 'nobody@example.com', password: TEST_PASSWORD })
  t.equal(answer.statusCode, 401)
  t.equal(refusal.exec(answer.body)?.[1], refusal.exec(right.body)?.[1], 'an unknown e-mail reads exactly as a locked account')
})

t.test('five failed logins within any 15 minutes lock, across where a window from the first failure would restart; the right password clears them', async (t) => {
  const user = await consoleUser(db.sql, url, { email: 'sliding@ada.example', role: 'business', businessId: ada.businessId })
  await new ConsoleClient(app).setPassword(user.link)
  const tryPassword = async (password: string) => {
    const client = new ConsoleClient(app)
    await client.get('/console/login')
    return (await client.post('/console/login', { email: user.email, password })).statusCode
  }
  const failures = async () => {
    const [row] = await db.sql<{ kept: number; locked: boolean }[]>`
      select cardinality(failed_login_times) as kept, coalesce(locked_until > now(), false) as locked from console_users where email = ${user.email}`
    return { ...row }
  }
  for (let attempt = 1; attempt <= 4; attempt++) t.equal(await tryPassword('wrong password!!'), 401)
  t.same(await failures(), { kept: 4, locked: false }, 'four failures kept, each with its time')
  t.equal(await tryPassword(TEST_PASSWORD), 303, 'the right password still opens the account')
  t.same(await failures(), { kept: 0, locked: false }, 'and clears them')

  for (let attempt = 1; attempt <= 4; attempt++) t.equal(await tryPassword('wrong password!!'), 401)
  // As if those four had been made 15 minutes and a second, 3, 2 and 1 minute ago.
  await db.sql`
    update console_users set failed_login_times = array[now() - interval '15 minutes 1 second', now() - interval '3 minutes', now() - interval '2 minutes', now() - interval '1 minute']
    where email = ${user.email}`
  t.equal(await tryPassword('wrong password!!'), 401)
  t.same(await failures(), { kept: 4, locked: false }, 'the oldest failure left the window: four within 15 minutes, no lock')
  t.equal(await tryPassword('wrong password!!'), 401)
  t.same(await failures(), { kept: 0, locked: true }, 'the fifth within 15 minutes locks')
  t.equal(await tryPassword(TEST_PASSWORD), 401, 'even against the right password')

  // A right password whose check ends after racing guesses locked the account: logIn then clears
  // the failures, and must leave the lock, or the guessers would get 5 more tries in 15 minutes.
  const [{ id }] = await db.sql<{ id: string }[]>`select id from console_users where email = ${user.email}`
  await clearLoginFailures(db.sql, id, null)
  t.same(await failures(), { kept: 0, locked: true }, 'a lock taken while a right password was checked stands')
})

t.test('one address gets CONSOLE_LOGIN_LIMIT logins a minute, then 429 before any password is hashed', async (t) => {
  const { app: limited } = await startConsole(t, db.env, { CONSOLE_LOGIN_LIMIT: '3' })
  const client = new ConsoleClient(limited)
  const answers = []
  for (let attempt = 1; attempt <= 4; attempt++) {
    await client.get('/console/login')
    answers.push(await client.post('/console/login', { email: `nobody${attempt}@example.com`, password: 'not the password' }))
  }
  t.same(answers.map((answer) => answer.statusCode), [401, 401, 401, 429])
  t.match(answers[3].body, /Too many attempts from your address; try again in \d+ seconds\./)
  const other = new ConsoleClient(limited)
  await other.get('/console/login')
  const elsewhere = await other.post('/console/login', { email: operator.email, password: TEST_PASSWORD }, { 'x-forwarded-for': '203.0.113.9' })
  t.equal(elsewhere.statusCode, 429, 'X-Forwarded-For is not trusted without TRUST_PROXY: the socket address is still the one counted')
})

t.test('with Redis out of reach the console still starts and logs in (the address limit fails open)', async (t) => {
  const { app: alone } = await startConsole(t, db.env, { REDIS_URL: 'redis://127.0.0.1:1', CONSOLE_LOGIN_LIMIT: '3' })
  const client = new ConsoleClient(alone)
  const login = await client.logIn(operator)
  t.equal(login.statusCode, 303)
  t.equal((await client.get('/console/ops/businesses')).statusCode, 200)
})

t.test('a business user sees only its own business: 404 for another one, 403 for operator pages', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(adaUser)
  const [bolaKey] = await db.sql<{ id: string }[]>`select id from api_keys where business_id = ${bola.businessId}`
  const bolaOrder = await seedOrder(db.sql, bola.businessId)
  const bolaEndpoint = await createEndpoint(db.sql, { businessId: bola.businessId, livemode: true }, { url: 'http://127.0.0.1:9/hook' }, { allowHttp: true, allowPrivate: true }, createSecretBox(loadConfig(webhookKeysEnv, db.env).WEBHOOK_SECRET_KEYS))
  t.equal(bolaEndpoint.kind, 'created')
  const endpointId = bolaEndpoint.kind === 'created' ? bolaEndpoint.endpoint.id : ''
  t.equal((await client.get(`/console/orders/${bolaOrder}`)).statusCode, 404, "another business's order is not found")
  t.equal((await client.get(`/console/webhooks/${endpointId}`)).statusCode, 404, "another business's endpoint is not found")
  t.equal((await client.post(`/console/orders/${bolaOrder}/cancel`)).statusCode, 404)
  t.equal((await client.post(`/console/webhooks/${endpointId}/delete`)).statusCode, 404)
  const [order] = await db.sql`select status from orders where id = ${bolaOrder}`
  t.equal(order.status, 'created', 'the order was not cancelled')
  t.ok(await findEndpoint(db.sql, endpointId, { businessId: bola.businessId, livemode: true }), 'the endpoint was not deleted')
  t.equal((await client.get(`/console/orders/${await seedOrder(db.sql, ada.businessId)}`)).statusCode, 200, 'its own order opens')
  const revoke = await client.post(`/console/keys/${bolaKey.id}/revoke`)
  t.equal(revoke.statusCode, 404, "another business's key is not found")
  const [stillActive] = await db.sql`select 1 from api_keys where id = ${bolaKey.id} and revoked_at is null`
  t.ok(stillActive, 'and it was not revoked')
  for (const path of ['/console/ops/businesses', `/console/ops/businesses/${bola.businessId}`, '/console/ops/rate-cards', '/console/ops/orders', '/console/ops/audit', '/console/ops/platform-rates']) {
    t.equal((await client.get(path)).statusCode, 403, `${path} is an operator page`)
  }
  const credit = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { amount: '1000000', reference: 'self-credit', mode: 'live' })
  t.equal(credit.statusCode, 403, 'a business user cannot credit its own wallet')
  t.equal((await findWallet(db.sql, ada.businessId))?.balance, 100000)
})

t.test('logging out ends the session on the server, not only in the browser', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  const cookie = client.cookie
  t.equal((await client.get('/console/ops/businesses')).statusCode, 200)
  t.equal((await client.post('/console/logout')).statusCode, 303)
  const replayed = await app.inject({ method: 'GET', url: '/console/ops/businesses', headers: { cookie: cookie ?? '' } })
  t.equal(replayed.statusCode, 303, 'the old cookie is worth nothing')
  t.match(String(replayed.headers.location), /^\/console\/login/)
})

t.test('a set-password link works once, and a short password is refused at its field', async (t) => {
  const user = await consoleUser(db.sql, url, { email: 'once@ada.example', role: 'business', businessId: ada.businessId })
  const token = new URL(user.link).searchParams.get('token') ?? ''
  const client = new ConsoleClient(app)
  t.equal((await client.get(`/console/set-password?token=${token}`)).statusCode, 200)
  const short = await client.post('/console/set-password', { token, password: 'short', confirm: 'short' })
  t.equal(short.statusCode, 400)
  t.match(short.body, /aria-invalid="true" aria-describedby="field-password-error"/)
  t.match(short.body, /Password must be at least 12 characters/)
  const differ = await client.post('/console/set-password', { token, password: TEST_PASSWORD, confirm: `${TEST_PASSWORD}!` })
  t.match(differ.body, /The two passwords differ/)
  t.equal((await client.post('/console/set-password', { token, password: TEST_PASSWORD, confirm: TEST_PASSWORD })).statusCode, 303)
  await client.get('/console/login')
  const again = await client.post('/console/set-password', { token, password: 'another long password', confirm: 'another long password' })
  t.equal(again.statusCode, 400)
  t.match(again.body, /used already or has expired/)
  t.equal((await new ConsoleClient(app).get(`/console/set-password?token=${token}`)).statusCode, 404)
  const [row] = await db.sql<{ passwordHash: string }[]>`select password_hash from console_users where email = ${user.email}`
  t.match(row.passwordHash, /^scrypt\$32768\$8\$1\$/, 'scrypt at N=2^15')
  t.notMatch(row.passwordHash, new RegExp(TEST_PASSWORD), 'never the password itself')
})

t.test('a malformed form or query is a 400 page, never a 500', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get(`/console/ops/businesses/${ada.businessId}`)
  const twice = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { amount: ['1', '2'], reference: 'x', mode: 'live' })
  t.equal(twice.statusCode, 400)
  const badMode = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { amount: '1', reference: 'x', mode: 'both' })
  t.equal(badMode.statusCode, 400)
  t.equal((await client.get('/console/ops/orders?status=lost')).statusCode, 400)
  t.equal((await client.get('/console/ops/orders?after=garbage')).statusCode, 400)
  // Year 0000 reads as a date in JavaScript and not in PostgreSQL: these were a 500.
  t.equal((await client.get('/console/ops/orders?created_gte=0000-01-01')).statusCode, 400)
  t.equal((await client.get('/console/ops/orders?after=0000-01-01T00:00:00.000Z_ORD-0000000000')).statusCode, 400)
  // PostgreSQL's text holds no NUL: a search or a form with %00 was a 500.
  t.equal((await client.get('/console/ops/businesses?q=Ada%00')).statusCode, 400)
  const nul = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { amount: '1', reference: 'top\u0000up', mode: 'live' })
  t.equal(nul.statusCode, 400)
  t.equal((await client.get('/console/ops/businesses/not-a-uuid')).statusCode, 404)
  const negative = await client.post(`/console/ops/businesses/${ada.businessId}/credit`, { amount: '-5', reference: 'neg', mode: 'live' })
  t.equal(negative.statusCode, 400)
  t.match(negative.body, /id="field-amount-error">Amount must be a positive number with at most 2 decimals, got &#39;-5&#39;</)
  t.equal((await findWallet(db.sql, ada.businessId))?.balance, 100000, 'nothing credited')
  // A link's token given twice is no link (hashing the list was a 500).
  t.equal((await new ConsoleClient(app).get('/console/set-password?token=a&token=b')).statusCode, 404)
  // A multipart body its parser cannot read: no boundary, or cut short (an upload dropped midway).
  await client.get('/console/ops/rate-cards')
  const target = `/console/ops/rate-cards?_csrf=${encodeURIComponent(client.csrf)}`
  for (const [what, contentType, payload] of [
    ['no boundary', 'multipart/form-data', 'garbage'],
    ['cut short', 'multipart/form-data; boundary=cut', '--cut\r\ncontent-disposition: form-data; name="file"; filename="card.json"\r\n\r\n{"na'],
  ]) {
    const upload = await app.inject({ method: 'POST', url: target, payload, headers: { cookie: client.cookie ?? '', 'content-type': contentType! } })
    t.equal(upload.statusCode, 400, `a rate-card upload with ${what} is the form's 400`)
    t.match(upload.body, /the upload could not be read/)
  }
})

t.test("a login's next page is a console path; any other, or one no header can carry, lands on the console", async (t) => {
  const cases: [string, string][] = [
    ['/console/ops/orders?status=created', '/console/ops/orders?status=created'],
    ['//evil.example/console', '/console'],
    ['https://evil.example/console/', '/console'],
    ['/consoleevil', '/console'],
    // Characters a Location header cannot carry: the redirect threw after the session was saved, and the process exited.
    ['/console/\u4e2d', '/console'],
    ['/console/\r\nSet-Cookie: x=1', '/console'],
  ]
  for (const [next, landing] of cases) {
    const client = new ConsoleClient(app)
    await client.get('/console/login')
    const login = await client.post('/console/login', { email: operator.email, password: TEST_PASSWORD, next })
    t.equal(login.statusCode, 303, JSON.stringify(next))
    t.equal(login.headers.location, landing, `${JSON.stringify(next)} leads to ${landing}`)
  }
  t.equal((await new ConsoleClient(app).get('/console/login')).statusCode, 200, 'and the console is still up')
})

t.test('operator actions land on the audit trail with who, what, before and after', async (t) => {
  const client = new ConsoleClient(app)
  await client.logIn(operator)
  await client.get(`/console/ops/businesses/${bola.businessId}`)
  const credit = await client.post(`/console/ops/businesses/${bola.businessId}/credit`, { amount: '2500.50', reference: 'audit-1', mode: 'live' })
  t.equal(credit.statusCode, 303)
  await client.get(`/console/ops/businesses/${bola.businessId}`)
  await client.post(`/console/ops/businesses/${bola.businessId}/credit`, { amount: '2500.50', reference: 'audit-1', mode: 'live' })
  const rows = await db.sql<{ actor: string; action: string; before: unknown; after: unknown }[]>`select actor, action, before, after from audit_log where business_id = ${bola.businessId}`
  t.same(rows, [{ actor: 'ops@example.com', action: 'wallet.credit', before: { balance: 1000 }, after: { balance: 3500.5, amount: 2500.5, reference: 'audit-1' } }], 'one row: the repeated reference credited nothing')
  const page = await client.get(`/console/ops/audit?business=${bola.businessId}`)
  t.match(page.body, /ops@example\.com<\/td><td>wallet\.credit/)
})

t.test('a page that waits past REQUEST_TIMEOUT_MS (a database that stopped answering) is a 503 page to retry', async (t) => {
  const silent = await startSilentServer(t)
  const { app: stuck } = await startConsole(t, db.env, { DATABASE_URL: silent.url.replace('http:', 'postgres:') + '/console', REQUEST_TIMEOUT_MS: '500' })
  const client = new ConsoleClient(stuck)
  t.equal((await client.get('/console/login')).statusCode, 200, 'a page that needs no database still opens')
  const login = await client.post('/console/login', { email: operator.email, password: TEST_PASSWORD })
  t.equal(login.statusCode, 503)
  t.match(login.body, /The console is slow to answer right now\. Try again in a moment\./)
  t.equal((await client.get('/console/login')).statusCode, 200, 'and the console keeps serving')
  silent.hangUp()
})
