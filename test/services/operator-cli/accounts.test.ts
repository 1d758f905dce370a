import { createServer, type AddressInfo, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { withDeadline } from '../../../shared/deadline.js'
import { Redis } from 'ioredis'
import { findActiveKeyByHash } from '../../../shared/db/api-keys.js'
import { openBusiness } from '../../../shared/accounts/operator-actions.js'
import { invalidationChannel } from '../../../shared/invalidation.js'
import { setBalanceWithEntry, useTestDb } from '../../helpers/db.js'
import { runOperatorCli, type CliRun } from '../../helpers/operator-cli.js'
import { waitFor } from '../../helpers/processes.js'
import { secretHash } from '../../../shared/secret-hash.js'

const business = ['--name', 'Mama Put Foods', '--phone', '+2348012345678', '--address', '12 Allen Avenue, Ikeja', '--state', 'Lagos']

t.test('operator CLI: businesses, keys and wallets', async (t) => {
  const db = await useTestDb(t)
  const { sql } = db
  const counts = async () => {
    const [row] = await sql`select
      (select count(*)::int from businesses) as businesses, (select count(*)::int from api_keys) as keys,
      (select count(*)::int from ledger_entries) as ledger, (select coalesce(sum(balance), 0)::bigint from wallets) as balances`
    return row
  }
  // A refusal: non-zero exit, one line on stderr, nothing on stdout, nothing written.
  const refuses = async (t: Test, args: string[], message: RegExp) => {
    const before = await counts()
    const run: CliRun = await runOperatorCli(db, args)
    t.not(run.code, 0, `${args[0]} exits non-zero`)
    t.equal(run.stdout, '', 'prints nothing on stdout')
    t.match(run.stderr.trim(), message)
    t.equal(run.stderr.trim().split('\n').length, 1, 'one line on stderr')
    t.notMatch(run.stderr, /syntax for type|invalid input/, 'no Postgres error leaks')
    t.same(await counts(), before, 'nothing changed')
  }

  const created = await runOperatorCli(db, ['business:create', ...business, '--lat', '6.6018', '--lng', '3.3515'])
  t.equal(created.code, 0, created.stderr)
  t.same(Object.keys(created.json), ['business_id'])
  const businessId: string = created.json.business_id
  const [row] = await sql`select b.name, b.state, b.latitude, b.currency, w.balance from businesses b join wallets w on w.business_id = b.id where b.id = ${businessId}`
  t.match(row, { name: 'Mama Put Foods', state: 'Lagos', latitude: 6.6018, currency: 'NGN', balance: 0 })

  t.test('business:create refusals', async (t) => {
    await refuses(t, ['business:create', ...business, '--currency', 'USD'], /USD is not this deployment's currency \(NGN\)/)
    await refuses(t, ['business:create', '--name', 'No Phone', '--address', 'x street', '--state', 'Lagos'], /--phone is required/)
    await refuses(t, ['business:create', ...business, '--lat', '6.5'], /--lat and --lng must be given together/)
    // The console's rules for a business, in the CLI's words.
    const withFlag = (flag: string, value: string) => business.map((arg, i) => (business[i - 1] === flag ? value : arg))
    await refuses(t, ['business:create', ...withFlag('--phone', 'notaphone')], /^--phone must be a phone number/)
    await refuses(t, ['business:create', ...withFlag('--address', 'x')], /^--address must be longer than or equal to 5 characters/)
    await refuses(t, ['business:create', ...withFlag('--state', 'Atlantis')], /^--state must be one of Nigeria's 36 states or the FCT/)
  })

  t.test('business:create again is a retry: the same name and details name the business opened, other details are refused', async (t) => {
    const opened = async () => (await sql`select count(*)::int as n from audit_log where action = 'business.create'`)[0].n
    const auditedBefore = await opened()
    for (const name of ['Mama Put Foods', 'MAMA PUT FOODS']) {
      const before = await counts()
      const again = await runOperatorCli(db, ['business:create', ...business.map((arg) => (arg === 'Mama Put Foods' ? name : arg)), '--lat', '6.6018', '--lng', '3.3515'])
      t.equal(again.code, 0, `${name}: a retry exits 0: ${again.stderr}`)
      t.same(again.json, { business_id: businessId }, 'and names the business already opened, no key')
      t.equal(again.stderr, `note: business 'Mama Put Foods' exists already (${businessId}); nothing was created. A new API key: key:create --business ${businessId}\n`)
      t.same(await counts(), before, 'no second business or wallet')
    }
    t.equal(await opened(), auditedBefore, 'nothing more on the audit trail')
    const withFlag = (flag: string, value: string) => business.map((arg, i) => (business[i - 1] === flag ? value : arg))
    await refuses(t, ['business:create', ...withFlag('--address', '14 Allen Avenue, Ikeja'), '--lat', '6.6018', '--lng', '3.3515'],
      new RegExp(`^a business named 'Mama Put Foods' already exists \\(${businessId}\\) with address 12 Allen Avenue, Ikeja, not 14 Allen Avenue, Ikeja; nothing was created: give its details, or another name for another business$`))
    await refuses(t, ['business:create', ...business], /already exists .* with latitude 6.6018, not none, longitude 3.3515, not none; nothing was created/)

    // Two at once, of a business not yet there (the command's step, in this process, so they overlap): one opens it, the other finds it.
    const before = await counts()
    const twice = { name: 'Twice Foods', phone: '+2348012345678', address: '1 Marina, Lagos Island', state: 'Lagos', currency: 'NGN' }
    // Two connections open first, so neither waits for the other's connection to be made.
    for (const reserved of await Promise.all([sql.reserve(), sql.reserve()])) reserved.release()
    const both = await Promise.all([0, 1].map(() => openBusiness(sql, 'cli:test', twice)))
    t.same(both.map((opening) => opening.kind).sort(), ['exists', 'opened'])
    t.equal(both[0].business.id, both[1].business.id, 'both name the one business')
    t.equal((await counts()).businesses, before.businesses + 1, 'one business was opened')
  })

  t.test('key:create stores only the hash, with its scopes', async (t) => {
    const run = await runOperatorCli(db, ['key:create', '--business', businessId, '--scopes', 'orders:write,orders:read'])
    t.equal(run.code, 0, run.stderr)
    t.same(Object.keys(run.json).sort(), ['api_key', 'key_id', 'livemode'])
    t.equal(run.json.livemode, true, 'a live key without --mode')
    t.match(run.json.api_key, /^ck_live_[0-9A-Za-z]{32}$/)
    const [key] = await sql`select * from api_keys where id = ${run.json.key_id}`
    t.equal(key.keyHash, secretHash(run.json.api_key))
    t.equal(key.displayPrefix, run.json.api_key.slice(0, 12))
    t.same(key.scopes, ['orders:write', 'orders:read'])
    const stored = JSON.stringify(await sql`select * from api_keys`)
    t.notOk(stored.includes(run.json.api_key.slice(8)), 'the secret part is stored nowhere')
    t.same(await findActiveKeyByHash(sql, key.keyHash), { keyId: key.id, businessId, scopes: ['orders:write', 'orders:read'], livemode: true })

    await refuses(t, ['key:create', '--business', businessId, '--scopes', 'orders:write,orders:delete'], /unknown scope 'orders:delete'; known scopes: orders:write, orders:read, webhooks:write/)
    await refuses(t, ['key:create', '--business', '00000000-0000-4000-8000-000000000000', '--scopes', 'orders:write'], /business 00000000-0000-4000-8000-000000000000 does not exist/)
    await refuses(t, ['key:create', '--business', 'not-a-uuid', '--scopes', 'orders:write'], /--business must be a UUID/)
    await refuses(t, ['key:create', '--business', businessId], /--scopes is required/)
  })

  t.test('key:revoke ends the key at once and announces it', async (t) => {
    const issued = await runOperatorCli(db, ['key:create', '--business', businessId, '--scopes', 'orders:write'])
    const subscriber = new Redis(db.env.REDIS_URL)
    t.teardown(() => subscriber.disconnect())
    const messages: unknown[] = []
    subscriber.on('message', (_channel, payload) => messages.push(JSON.parse(payload)))
    await subscriber.subscribe(invalidationChannel(db.env.QUEUE_PREFIX))

    const run = await runOperatorCli(db, ['key:revoke', '--key-id', issued.json.key_id])
    t.equal(run.code, 0, run.stderr)
    t.equal(run.json.key_id, issued.json.key_id)
    t.ok(Date.parse(run.json.revoked_at) <= Date.now())
    t.equal(await findActiveKeyByHash(sql, secretHash(issued.json.api_key)), null)
    t.ok(await waitFor(() => messages.length > 0, 10_000), 'the revoke is announced')
    t.same(messages, [{ kind: 'api-key', keyHash: secretHash(issued.json.api_key) }])

    await refuses(t, ['key:revoke', '--key-id', '00000000-0000-4000-8000-000000000000'], /API key .* does not exist/)
  })

  t.test('a revoke stands when Redis is down', async (t) => {
    const issued = await runOperatorCli(db, ['key:create', '--business', businessId, '--scopes', 'orders:write'])
    const run = await runOperatorCli(db, ['key:revoke', '--key-id', issued.json.key_id], { REDIS_URL: 'redis://127.0.0.1:1' })
    t.equal(run.code, 0)
    t.match(run.stderr, /warning: Redis .* unreachable/)
    t.equal(await findActiveKeyByHash(sql, secretHash(issued.json.api_key)), null)
  })

  t.test('a revoke stands, and the CLI ends, when Redis accepts the connection and never answers', async (t) => {
    // A frozen Redis, or a port held by something silent: the connect succeeds, no reply ever comes.
    const sockets: Socket[] = []
    const silent = createServer((socket) => void sockets.push(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    t.teardown(() => {
      for (const socket of sockets) socket.destroy()
      silent.close()
    })
    const { port } = silent.address() as AddressInfo
    const issued = await runOperatorCli(db, ['key:create', '--business', businessId, '--scopes', 'orders:write'])
    const run = await withDeadline(runOperatorCli(db, ['key:revoke', '--key-id', issued.json.key_id], { REDIS_URL: `redis://127.0.0.1:${port}` }), 30_000)
    t.equal(run.code, 0, 'the command ends with its change made')
    t.match(run.stderr, /warning: Redis .* unreachable/)
    t.equal(await findActiveKeyByHash(sql, secretHash(issued.json.api_key)), null)
  })

  t.test('wallet:credit keeps balance = credits − debits and credits a reference once', async (t) => {
    const first = await runOperatorCli(db, ['wallet:credit', '--business', businessId, '--amount', '50000', '--reference', 'TRF-001'])
    t.same(first.json, { business_id: businessId, balance: 50000, currency: 'NGN', livemode: true })
    const repeated = await runOperatorCli(db, ['wallet:credit', '--business', businessId, '--amount', '50000', '--reference', 'TRF-001'])
    t.equal(repeated.code, 0, 'a retry: the same reference and amount')
    t.same(repeated.json, { business_id: businessId, balance: 50000, currency: 'NGN', livemode: true }, 'the repeated reference credits nothing')
    // Another amount under a used reference is no retry: it fails, so a script checking the exit code does not take it for credited.
    const mistaken = await runOperatorCli(db, ['wallet:credit', '--business', businessId, '--amount', '2500.5', '--reference', 'TRF-001'])
    t.equal(mistaken.code, 1)
    t.equal(mistaken.stdout, '')
    t.match(mistaken.stderr, /^reference 'TRF-001' already credited 50000 on \S+, not 2500\.5; nothing was credited: use another reference\n$/)
    const cents = await runOperatorCli(db, ['wallet:credit', '--business', businessId, '--amount', '100.25'])
    t.equal(cents.json.balance, 50100.25)
    const shown = await runOperatorCli(db, ['wallet:show', '--business', businessId])
    t.same(shown.json, { business_id: businessId, balance: 50100.25, currency: 'NGN', livemode: true })
    const [ledger] = await sql`select count(*)::int as entries, sum(case kind when 'credit' then amount else -amount end)::int as net from ledger_entries where business_id = ${businessId}`
    t.same(ledger, { entries: 2, net: 5010025 })

    await refuses(t, ['wallet:credit', '--business', businessId, '--amount=-5'], /--amount must be a positive amount/)
    // A negative number as the next argument is the option's value, answered by the command's
    // own check, never parseArgs' "argument is ambiguous".
    await refuses(t, ['wallet:credit', '--business', businessId, '--amount', '-5'], /^--amount must be a positive amount .*, got '-5'$/)
    await refuses(t, ['wallet:credit', '--business', businessId, '--amount', '-0.5', '--reference', 'TRF-NEG'], /^--amount must be a positive amount .*, got '-0.5'$/)
    await refuses(t, ['wallet:credit', '--business', businessId, '--amount', '0'], /--amount must be a positive amount/)
    await refuses(t, ['wallet:credit', '--business', businessId, '--amount', '1.234'], /at most 2 decimals/)
    await refuses(t, ['wallet:credit', '--business', '00000000-0000-4000-8000-000000000000', '--amount', '10'], /does not exist/)
    // A wallet full to its limit (10^15 kobo) takes no more: set by hand, with its ledger entry.
    await sql.begin((tx) => setBalanceWithEntry(tx, businessId, { kind: 'credit', amount: 1e15 - 5010025, reference: 'FILL', balanceAfter: 1e15 }))
    await refuses(t, ['wallet:credit', '--business', businessId, '--amount', '0.01', '--reference', 'TRF-OVER'], /^--amount would take the balance \(10000000000000\) past the most a wallet holds, 10000000000000 NGN; nothing was credited$/)
    await refuses(t, ['wallet:show', '--business', 'abc'], /--business must be a UUID/)
  })

  t.test('unknown commands and flags are refused', async (t) => {
    await refuses(t, ['wallet:drain', '--business', businessId], /unknown command 'wallet:drain'; one of: business:create/)
    await refuses(t, ['wallet:show', '--business', businessId, '--verbose', 'yes'], /Unknown option '--verbose'/)
  })

  t.test('a configuration the CLI cannot use is named as such, before any connection', async (t) => {
    const run = await runOperatorCli(db, ['wallet:show', '--business', businessId], { DATABASE_POOL_MAX: 'many' })
    t.equal(run.code, 1)
    t.equal(run.stdout, '')
    t.match(run.stderr.trim(), /^Invalid configuration: DATABASE_POOL_MAX: /, 'the problem, not "failed:"')
  })
})
