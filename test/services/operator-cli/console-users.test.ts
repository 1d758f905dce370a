import { userInfo } from 'node:os'
import t from 'tap'
import { useTestDb } from '../../helpers/db.js'
import { seedAccount } from '../../helpers/accounts.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'

const db = await useTestDb(t)
const { sql } = db
const account = await seedAccount(sql, { balance: 100 })
const env = { CONSOLE_PUBLIC_URL: 'https://console.example.com/' }

t.test('user:create makes a console user and prints its one-time link; only the link\'s hash is stored', async (t) => {
  const operator = await runOperatorCli(db, ['user:create', '--email', 'Ops@Example.com', '--role', 'operator'], env)
  t.equal(operator.code, 0, operator.stderr)
  t.same(Object.keys(operator.json), ['user_id', 'email', 'role', 'set_password_url', 'expires_at'])
  t.match(operator.json, { email: 'Ops@Example.com', role: 'operator' })
  const link = new URL(operator.json.set_password_url)
  t.equal(`${link.origin}${link.pathname}`, 'https://console.example.com/console/set-password', 'on CONSOLE_PUBLIC_URL, trailing slash dropped')
  const token = link.searchParams.get('token') ?? ''
  t.match(token, /^[\w-]{43}$/, '32 random bytes')
  const hoursLeft = (Date.parse(operator.json.expires_at) - Date.now()) / 3_600_000
  t.ok(hoursLeft > 23.9 && hoursLeft <= 24, `valid 24 h (${hoursLeft.toFixed(2)} h)`)
  const stored = await sql`select token_hash from console_password_tokens`
  t.equal(stored.length, 1)
  t.not(stored[0].tokenHash, token, 'the token itself is not stored')

  const business = await runOperatorCli(db, ['user:create', '--email', 'owner@ada.example', '--role', 'business', '--business', account.businessId], env)
  t.equal(business.code, 0, business.stderr)
  const [row] = await sql`select role, business_id, password_hash from console_users where email = 'owner@ada.example'`
  t.same(row, { role: 'business', businessId: account.businessId, passwordHash: null })
})

t.test('user:create refusals: one line on stderr, nothing written', async (t) => {
  const before = await sql`select count(*)::int as n from console_users`
  const cases: [string[], RegExp][] = [
    [['--email', 'ops@example.com', '--role', 'operator'], /a console user with email ops@example.com already exists/],
    [['--email', 'OPS@EXAMPLE.COM', '--role', 'operator'], /already exists/],
    [['--email', 'not-an-email', '--role', 'operator'], /email must be an e-mail address/],
    [['--email', 'x@example.com', '--role', 'business'], /a business user needs --business/],
    [['--email', 'x@example.com', '--role', 'operator', '--business', account.businessId], /an operator belongs to no business/],
    [['--email', 'x@example.com', '--role', 'business', '--business', '00000000-0000-4000-8000-000000000000'], /business 00000000-0000-4000-8000-000000000000 does not exist/],
    [['--email', 'x@example.com', '--role', 'business', '--business', 'nope'], /--business must be a UUID, got 'nope'/],
    [['--email', 'x@example.com', '--role', 'admin'], /--role must be one of operator, business, got 'admin'/],
  ]
  for (const [args, message] of cases) {
    const run = await runOperatorCli(db, ['user:create', ...args], env)
    t.not(run.code, 0, args.join(' '))
    t.equal(run.stdout, '')
    t.match(run.stderr.trim(), message)
    t.equal(run.stderr.trim().split('\n').length, 1)
  }
  t.same(await sql`select count(*)::int as n from console_users`, before, 'no user was made')
})

t.test('the CLI\'s operator actions are on the audit trail too, as cli:<os user>', async (t) => {
  const credited = await runOperatorCli(db, ['wallet:credit', '--business', account.businessId, '--amount', '250.75', '--reference', 'bank-42'])
  t.equal(credited.code, 0, credited.stderr)
  await runOperatorCli(db, ['wallet:credit', '--business', account.businessId, '--amount', '250.75', '--reference', 'bank-42'])
  const [key] = await sql<{ id: string; displayPrefix: string }[]>`select id, display_prefix from api_keys where business_id = ${account.businessId}`
  t.equal((await runOperatorCli(db, ['key:revoke', '--key-id', key.id])).code, 0)
  t.equal((await runOperatorCli(db, ['key:revoke', '--key-id', key.id])).code, 0, 'a repeat revoke succeeds')
  const rows = await sql`select actor, action, subject, before, after from audit_log where business_id = ${account.businessId} and action in ('wallet.credit', 'key.revoke') order by id`
  const actor = `cli:${userInfo().username}`
  t.same(rows, [
    { actor, action: 'wallet.credit', subject: 'live wallet', before: { balance: 100 }, after: { balance: 350.75, amount: 250.75, reference: 'bank-42' } },
    { actor, action: 'key.revoke', subject: key.displayPrefix, before: { revoked: false }, after: { revoked_at: rows[1]?.after?.revoked_at } },
  ], 'one credit (the repeat credited nothing) and one revocation (the repeat changed nothing)')
  t.match(rows[1]?.after?.revoked_at, /^\d{4}-\d\d-\d\dT/)
})

t.test('user:create and key:create are audited; the key itself never is', async (t) => {
  const created = await runOperatorCli(db, ['key:create', '--business', account.businessId, '--scopes', 'orders:write'], env)
  t.equal(created.code, 0, created.stderr)
  const rows = await sql`select action, subject, after from audit_log where action in ('key.create', 'user.create') and business_id = ${account.businessId} order by id`
  t.same(rows.map((row) => row.action), ['user.create', 'key.create'])
  t.equal(rows[0].subject, 'owner@ada.example')
  t.same(rows[1].after, { key_id: created.json.key_id, scopes: ['orders:write'], livemode: true })
  t.notMatch(JSON.stringify(rows), created.json.api_key, 'no secret on the trail')
})

t.test('user:link issues a new one-time link and the older one stops working; user:disable ends every session and every way in', async (t) => {
  const created = await runOperatorCli(db, ['user:create', '--email', 'relink@ada.example', '--role', 'business', '--business', account.businessId], env)
  const first = new URL(created.json.set_password_url).searchParams.get('token')
  const linked = await runOperatorCli(db, ['user:link', '--email', 'RELINK@ada.example'], env)
  t.equal(linked.code, 0, linked.stderr)
  t.same(Object.keys(linked.json), ['user_id', 'email', 'set_password_url', 'expires_at'])
  const usable = await sql`select token_hash from console_password_tokens where user_id = ${created.json.user_id} and used_at is null`
  t.equal(usable.length, 1, 'only the newest link is usable')
  t.not(new URL(linked.json.set_password_url).searchParams.get('token'), first)
  const linkAudit = await sql`select actor, action, subject, business_id, after from audit_log where action = 'user.link'`
  t.match(linkAudit, [{ actor: /^cli:/, action: 'user.link', subject: 'relink@ada.example', businessId: account.businessId, after: { expires_at: linked.json.expires_at } }], 'the new link is audited, as cli:<os user>')
  t.equal(linkAudit.length, 1)
  t.notMatch(JSON.stringify(await sql`select * from audit_log`), new URL(linked.json.set_password_url).searchParams.get('token') ?? '', 'the link is not on the trail')

  await sql`insert into console_sessions (id, data, expires_at) values ('s-1', ${sql.json({ userId: created.json.user_id })}, now() + interval '1 hour'), ('s-2', ${sql.json({ userId: created.json.user_id })}, now() + interval '1 hour')`
  const disabled = await runOperatorCli(db, ['user:disable', '--email', 'relink@ada.example'], env)
  t.equal(disabled.code, 0, disabled.stderr)
  t.match(disabled.json, { user_id: created.json.user_id, email: 'relink@ada.example', sessions_ended: 2 })
  t.match(disabled.json.disabled_at, /^\d{4}-/)
  t.same(await sql`select id from console_sessions where data ->> 'userId' = ${created.json.user_id}`, [], 'every session is gone')
  const again = await runOperatorCli(db, ['user:disable', '--email', 'relink@ada.example'], env)
  t.equal(again.code, 0, 'a repeat succeeds')
  t.equal(again.json.disabled_at, disabled.json.disabled_at, 'and keeps the first time')
  const audit = await sql`select action, subject from audit_log where action = 'user.disable'`
  t.same(audit, [{ action: 'user.disable', subject: 'relink@ada.example' }], 'audited once')
  const refused = await runOperatorCli(db, ['user:link', '--email', 'relink@ada.example'], env)
  t.not(refused.code, 0)
  t.match(refused.stderr, /console user relink@ada.example is disabled/)
  t.equal((await sql`select 1 from audit_log where action = 'user.link'`).length, 1, 'a refused link is not audited')
  const unknown = await runOperatorCli(db, ['user:disable', '--email', 'nobody@ada.example'], env)
  t.match(unknown.stderr, /no console user has email nobody@ada.example/)
})
