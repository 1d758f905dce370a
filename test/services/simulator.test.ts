import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { Redis } from 'ioredis'
import { lastFix } from '../../shared/couriers/positions.js'
import { findCourier } from '../../shared/db/couriers.js'
import { courierOnOrder } from '../../shared/dispatch/views.js'
import { changeOrder } from '../../shared/orders/change.js'
import { walletsAgainstLedger } from '../helpers/db.js'
import { startLauncher } from '../helpers/launcher.js'
import { usePhotoStore } from '../helpers/photos.js'
import { childEnv, freePort, projectRoot, waitFor, waitForValue } from '../helpers/processes.js'
import { shipment } from '../helpers/shipments.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

// The simulator against the built launcher (DESIGN 14, 17.5): 20 riders, through the public
// courier API only, deliver 100 live orders placed in one batch, and every event of every
// order reaches the business's webhook receiver, signed. Small dispatch settings and a fast
// clock keep it to well under two minutes.
const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const ORDERS = 100
const DEADLINE_MS = 100_000

t.test('npm run simulate -- --couriers 20 delivers 100 orders placed at once; every event reaches the webhook receiver', async (t) => {
  const photos = usePhotoStore(t)
  const launched = await startLauncher(t, { databaseUrl, redisUrl, env: { ...photos.env, DISPATCH_OFFER_S: '3', DISPATCH_RETRY_S: '1' } })
  const { business } = launched

  const receiver = await startReceiver(t)
  const endpoint = await business('POST', 'webhook-endpoints', { url: receiver.url('/hooks') })
  t.equal(endpoint.status, 201)
  receiver.route('/hooks', { secrets: [(await endpoint.json()).secret], respond: () => 204 })

  // A wrong --api (nothing listens there): one line saying so, exit 1, and no Sim Rider given a token.
  const tokensBefore = (await launched.sql<{ count: number }[]>`select count(*)::int as count from courier_tokens`)[0]!.count
  const nowhere = `http://127.0.0.1:${await freePort()}/v2`
  const wrongApi = spawnSync(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), '--couriers', '3', '--api', nowhere], { env: childEnv(launched.env), encoding: 'utf8', timeout: 20_000 })
  t.equal(wrongApi.status, 1, 'a wrong --api exits 1')
  t.same(wrongApi.stderr.trim().split('\n'), [`simulate: the API at ${nowhere} could not be reached (ECONNREFUSED)`], 'one line, no stack')
  t.equal((await launched.sql<{ count: number }[]>`select count(*)::int as count from courier_tokens`)[0]!.count, tokensBefore, 'no token issued before the API was found')

  // A DATABASE_URL that is not the gateway's (here a database that does not exist): one line naming where, exit 1.
  const wrongDb = new URL(launched.env.DATABASE_URL!)
  wrongDb.pathname = '/courier_no_such_database'
  const noDatabase = spawnSync(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), '--couriers', '3', '--api', launched.baseUrl], { env: childEnv({ ...launched.env, DATABASE_URL: wrongDb.toString() }), encoding: 'utf8', timeout: 20_000 })
  t.equal(noDatabase.status, 1, 'a database it cannot use exits 1')
  t.same(noDatabase.stderr.trim().split('\n'), [`simulate: cannot make the Sim Riders in the database at ${wrongDb.hostname}:${wrongDb.port || '5432'}/courier_no_such_database: database "courier_no_such_database" does not exist; is DATABASE_URL the gateway's, and has npm start migrated it?`], 'one line, no stack')

  const simulator = spawn(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), '--couriers', '20', '--speed', '3000', '--tick-ms', '1000', '--accept', '0.9', '--api', launched.baseUrl],
    { env: childEnv(launched.env), stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  for (const stream of [simulator.stdout, simulator.stderr]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  const exited = new Promise<number | null>((resolve) => simulator.once('exit', resolve))
  t.teardown(() => { if (simulator.exitCode === null) simulator.kill('SIGKILL') })
  const ready = await waitForValue(async () => lines.find((line) => line.includes('riders available')), Boolean, 30_000, 100)
  t.match(ready.value, /^simulate: 20 riders available around the demo zones/, lines.join('\n'))

  const placed = await business('POST', 'order', Array.from({ length: ORDERS }, (_, i) => shipment({ recipient_name: `Recipient ${i}` })), { 'idempotency-key': 'simulator-batch' })
  t.equal(placed.status, 201)
  const orderIds: string[] = (await placed.json()).orders.map((order: { order_id: string }) => order.order_id)
  t.equal(orderIds.length, ORDERS)

  const done = await waitForValue(
    async () => (await launched.sql<{ status: string; count: number }[]>`select status, count(*)::int as count from orders where id = any(${orderIds}) group by status`),
    (rows) => rows.length === 1 && rows[0]!.status === 'delivered', DEADLINE_MS, 500)
  t.same(done.value, [{ status: 'delivered', count: ORDERS }], 'every order delivered by the simulated riders', lastWords(launched, lines))

  // Orders that ask for proof: a PIN (the recipient reads it off the tracking page, and the rider
  // delivers with it), a photo (the rider takes one at the door), or both. Each is delivered.
  const proofs = [{ pin: true }, { photo: true }, { pin: true, photo: true }].flatMap((proof) => Array.from({ length: 4 }, () => proof))
  const withProof = await business('POST', 'order', proofs.map((proof, i) => shipment({ proof, recipient_name: `Proof Recipient ${i}` })), { 'idempotency-key': 'simulator-proof' })
  t.equal(withProof.status, 201)
  const proofOrders: string[] = (await withProof.json()).orders.map((order: { order_id: string }) => order.order_id)
  const settled = await waitForValue(async () => Promise.all(proofOrders.map(async (orderId) => (await business('GET', `orders/${orderId}`)).json())),
    (orders) => orders.every((order) => order.status === 'delivered' || order.status === 'returned'), 40_000, 250)
  t.same(settled.value.map((order) => order.status), proofs.map(() => 'delivered'), 'every order asking for proof delivered',
    { ...lastWords(launched, lines), log: lines.filter((line) => proofOrders.some((id) => line.includes(id))) })
  settled.value.forEach((order, i) => t.match(order.proof_of_delivery, {
    pin_required: proofs[i]!.pin === true, pin_verified: proofs[i]!.pin === true, photo_required: proofs[i]!.photo === true,
    photo_url: proofs[i]!.photo ? /\/proof\/photo$/ : null,
  }, `${order.order_id} delivered with ${JSON.stringify(proofs[i])}`))
  t.equal(photos.files().length, proofs.filter((proof) => proof.photo).length, 'one photo kept for each order that asked for one')

  // An operator disables a rider mid-run: its next call is a 401, said once, and that rider stops.
  const [disabled] = await launched.sql<{ id: string }[]>`select id from couriers where name = 'Sim Rider 020'`
  const cli = spawnSync(process.execPath, [path.join(projectRoot, 'dist/services/operator-cli/main.js'), 'courier:disable', '--courier', disabled!.id], { env: childEnv(launched.env), encoding: 'utf8', timeout: 20_000 })
  t.equal(cli.status, 0, cli.stderr)
  const refusedLine = (line: string) => line.startsWith('simulate: Sim Rider 020: its token was refused (401 ')
  const told = await waitForValue(async () => lines.filter(refusedLine), (found) => found.length > 0, 15_000, 100)
  t.match(told.value, [/^simulate: Sim Rider 020: its token was refused \(401 Invalid courier token\), perhaps by courier:disable; rider stopped$/], 'the refused token is reported')

  const couriers = await launched.sql<{ name: string }[]>`select distinct c.name from orders o join couriers c on c.id = o.courier_id where o.id = any(${orderIds})`
  t.ok(couriers.length > 1 && couriers.every((courier) => courier.name.startsWith('Sim Rider ')), `shared among the simulated riders (${couriers.length} of them)`)

  // Four events per order (created, assigned, picked_up, delivered), each received verified, at least once.
  const expected = await launched.sql<{ id: string }[]>`select id from events where order_id = any(${orderIds})`
  t.ok(expected.length >= ORDERS * 4, `${expected.length} events written`)
  const received = await waitForValue(async () => new Set(receiver.at('/hooks').filter((receipt) => receipt.verified).map((receipt) => receipt.id)),
    (ids) => expected.every((event) => ids.has(event.id)), 60_000, 250)
  t.equal(expected.filter((event) => !received.value.has(event.id)).length, 0, 'every event delivered to the receiver and verified')

  simulator.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM stops the simulator cleanly')
  t.match(lines.at(-1), /^simulate: stopped after \d+ s; \d+ orders delivered, 0 failed, 0 returned; riders offline$/)
  const afterRefusal = lines.slice(lines.findIndex(refusedLine)).filter((line) => line.includes('Sim Rider 020'))
  t.equal(afterRefusal.length, 1, `said once, and nothing more from that rider: ${afterRefusal.join('\n')}`)

  // A run stopped while a rider held an order: the next run's rider (the same courier) rides it on
  // from where it got to, instead of holding it for ever and never being offered another.
  const [heldOne] = (await (await business('POST', 'order', [shipment()], { 'idempotency-key': 'simulator-held' })).json()).orders
  const rider = await findCourier(launched.sql, (await launched.sql<{ id: string }[]>`select id from couriers where name = 'Sim Rider 001'`)[0]!.id)
  const assigned = await changeOrder(launched.sql, { orderId: heldOne.order_id, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(rider!), reason: null })
  t.equal(assigned.kind, 'changed', 'the order is Sim Rider 001\'s while no simulator runs')
  // And one Sim Rider 002 holds that asks for a PIN whose recipient never got the tracking link:
  // the rider fails it at the door and takes it back, and the stop line counts both.
  const [noPin] = (await (await business('POST', 'order', [shipment({ proof: { pin: true } })], { 'idempotency-key': 'simulator-no-pin' })).json()).orders
  await launched.sql`update orders set tracking_url = null where id = ${noPin.order_id}`
  const second = await findCourier(launched.sql, (await launched.sql<{ id: string }[]>`select id from couriers where name = 'Sim Rider 002'`)[0]!.id)
  t.equal((await changeOrder(launched.sql, { orderId: noPin.order_id, scope: null }, { kind: 'advance', to: 'assigned', courier: courierOnOrder(second!), reason: null })).kind, 'changed')
  // Where the first run last heard from Sim Rider 001: the tracking page showed the rider there.
  const redis = new Redis(redisUrl)
  t.teardown(() => redis.disconnect())
  const lastSeen = await lastFix(redis, launched.env.QUEUE_PREFIX, rider!.id)
  t.ok(lastSeen, 'the first run left Sim Rider 001 on the map')
  const again = spawn(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), '--couriers', '2', '--speed', '3000', '--tick-ms', '1000', '--api', launched.baseUrl],
    { env: childEnv(launched.env), stdio: ['ignore', 'pipe', 'pipe'] })
  const againLines: string[] = []
  for (const stream of [again.stdout, again.stderr]) createInterface({ input: stream }).on('line', (line) => againLines.push(line))
  const againExited = new Promise<number | null>((resolve) => again.once('exit', resolve))
  t.teardown(() => { if (again.exitCode === null) again.kill('SIGKILL') })
  const resumed = await waitForValue(async () => (await business('GET', `orders/${heldOne.order_id}`)).json(), (order) => order.status === 'delivered', 30_000, 250)
  t.equal(resumed.value.status, 'delivered', `carried on and delivered: ${againLines.join('\n')}`)
  const from = `${lastSeen!.latitude.toFixed(4)}, ${lastSeen!.longitude.toFixed(4)}`
  t.ok(againLines.some((line) => line.includes(`carries on with ${heldOne.order_id} (assigned) from ${from}`)), `the rider says so, riding on from where it was last heard from (${from}), not from its start: ${againLines.join('\n')}`)
  const returned = await waitForValue(async () => (await business('GET', `orders/${noPin.order_id}`)).json(), (order) => order.status === 'returned', 30_000, 250)
  t.equal(returned.value.status, 'returned', `no PIN at the door: failed and taken back: ${againLines.join('\n')}`)
  again.kill('SIGTERM')
  t.equal(await againExited, 0)
  t.match(againLines.at(-1), /^simulate: stopped after \d+ s; 1 orders delivered, 1 failed, 1 returned; riders offline$/, 'the failed and returned orders are counted')

  // A delivery refused for what the rider cannot mend: wrong PINs given before it came locked the
  // order's delivery (409 Too many wrong PINs). The rider reads the order again, finds it still
  // theirs and picked up, fails it through the API and takes it back; then, free again, it takes
  // the next offer. (Sim Rider 001 starts some 5 km from the pickup with the default --seed.)
  const [locked] = (await (await business('POST', 'order', [shipment({ proof: { pin: true } })], { 'idempotency-key': 'simulator-locked' })).json()).orders
  for (const to of ['assigned', 'picked_up'] as const) {
    t.equal((await changeOrder(launched.sql, { orderId: locked.order_id, scope: null }, { kind: 'advance', to, courier: to === 'assigned' ? courierOnOrder(rider!) : null, reason: null })).kind, 'changed')
  }
  await launched.sql`update orders set pin_attempts = 5 where id = ${locked.order_id}`
  const mending = runSimulator(t, 'node', ['--couriers', '1', '--speed', '3000', '--tick-ms', '1000', '--accept', '1', '--api', launched.baseUrl], launched.env)
  const takenBack = await waitForValue(async () => (await business('GET', `orders/${locked.order_id}`)).json(), (order) => order.status === 'returned', 30_000, 250)
  t.equal(takenBack.value.status, 'returned', `failed through the API and taken back: ${mending.lines.join('\n')}`)
  t.match(takenBack.value.history.find((step: { status: string }) => step.status === 'failed'), { reason: `could not deliver: Too many wrong PINs for ${locked.order_id}` }, 'the business reads why')
  t.ok(mending.lines.some((line) => line.includes(`deliver of ${locked.order_id} refused (409 Too many wrong PINs for ${locked.order_id}); failed it, taking it back`)), 'the rider says so')
  const [next] = (await (await business('POST', 'order', [shipment()], { 'idempotency-key': 'simulator-after-locked' })).json()).orders
  const nextDone = await waitForValue(async () => (await business('GET', `orders/${next.order_id}`)).json(), (order) => order.status === 'delivered', 30_000, 250)
  t.match(nextDone.value, { status: 'delivered', courier: { name: 'Sim Rider 001' } }, `free again, the rider took the next offer and delivered it: ${mending.lines.join('\n')}`)
  mending.child.kill('SIGTERM')
  t.ok(await waitFor(() => mending.closed(), 5000, 50), 'stopped')
  t.match(mending.lines.at(-1), /^simulate: stopped after \d+ s; 1 orders delivered, 1 failed, 1 returned; riders offline$/, 'the failed, returned and delivered orders counted')

  // An order an operator gives a rider by hand (order:advance --courier): the rider hears
  // order_assigned on its stream and rides it, though it declines every offer (--accept 0).
  const byHand = runSimulator(t, 'node', ['--couriers', '1', '--speed', '3000', '--tick-ms', '1000', '--accept', '0', '--api', launched.baseUrl], launched.env)
  t.ok((await waitForValue(async () => byHand.lines.some((line) => line.includes('riders available')), Boolean, 30_000, 100)).held, byHand.lines.join('\n'))
  const [handed] = (await (await business('POST', 'order', [shipment()], { 'idempotency-key': 'simulator-by-hand' })).json()).orders
  const given = spawnSync(process.execPath, [path.join(projectRoot, 'dist/services/operator-cli/main.js'), 'order:advance', '--order', handed.order_id, '--to', 'assigned', '--courier', rider!.id], { env: childEnv(launched.env), encoding: 'utf8', timeout: 20_000 })
  t.equal(given.status, 0, given.stderr)
  const handedDone = await waitForValue(async () => (await business('GET', `orders/${handed.order_id}`)).json(), (order) => order.status === 'delivered', 30_000, 250)
  t.match(handedDone.value, { status: 'delivered', courier: { name: 'Sim Rider 001' } }, `given by hand, ridden and delivered: ${byHand.lines.join('\n')}`)
  t.ok(byHand.lines.some((line) => line.includes(`Sim Rider 001 was given ${handed.order_id} by an operator`)), 'the rider says so')
  byHand.child.kill('SIGTERM')
  t.ok(await waitFor(() => byHand.closed(), 5000, 50), 'stopped')

  // SIGTERM through `npm run simulate` (npm → sh → node): the simulator itself stops, and soon.
  const viaNpm = runSimulator(t, 'npm', ['--couriers', '2', '--tick-ms', '1000', '--api', launched.baseUrl], launched.env)
  t.ok((await waitForValue(async () => viaNpm.lines.some((line) => line.includes('riders available')), Boolean, 30_000, 100)).held, viaNpm.lines.join('\n'))
  viaNpm.child.kill('SIGTERM')
  t.ok(await waitFor(() => viaNpm.closed(), 3000, 50), 'npm run simulate: gone within 3 s of SIGTERM')
  t.match(viaNpm.lines.at(-1), /^simulate: stopped after \d+ s; 0 orders delivered, 0 failed, 0 returned; riders offline$/, 'and its riders offline')

  // SIGTERM while the API answers nothing (its gateway frozen): stopped within a few seconds all
  // the same, saying the riders' going offline is unconfirmed.
  const frozen = runSimulator(t, 'node', ['--couriers', '2', '--tick-ms', '1000', '--api', launched.baseUrl], launched.env)
  t.ok((await waitForValue(async () => frozen.lines.some((line) => line.includes('riders available')), Boolean, 30_000, 100)).held, frozen.lines.join('\n'))
  const gateways = launched.pids('gateway')
  const thaw = () => gateways.forEach((pid) => process.kill(pid, 'SIGCONT'))
  t.teardown(thaw)
  gateways.forEach((pid) => process.kill(pid, 'SIGSTOP'))
  frozen.child.kill('SIGTERM')
  const stoppedFrozen = await waitFor(() => frozen.closed(), 4000, 50)
  thaw()
  t.ok(stoppedFrozen, 'gone within 4 s of SIGTERM though the API hangs')
  t.match(frozen.lines.at(-1), /^simulate: stopped after \d+ s; .*; 2 of 2 riders not confirmed offline/)

  const wallets = (await walletsAgainstLedger(launched.sql)).filter((wallet) => wallet.businessId === launched.businessId)
  t.ok(wallets.length > 0 && wallets.every((wallet) => wallet.balance === wallet.ledger), 'the demo wallets are the sum of their ledgers')
})

t.test('a flag it cannot run with: one line saying which, exit 1, before anything starts', async (t) => {
  const cases: [string[], RegExp][] = [
    [['--couriers'], /^simulate: Option '--couriers <value>' argument missing$/],
    [['--bogus'], /^simulate: Unknown option '--bogus'$/],
    [['--couriers', '-5'], /^simulate: Option '--couriers' argument is ambiguous/],
    [['--couriers', '0'], /^simulate: --couriers: Too small: expected number to be >=1$/],
  ]
  for (const [args, message] of cases) {
    const run = spawnSync(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), ...args], { encoding: 'utf8', timeout: 20_000 })
    t.equal(run.status, 1, args.join(' '))
    const lines = run.stderr.trim().split('\n')
    t.equal(lines.length, 1, `${args.join(' ')}: one line, no stack: ${run.stderr}`)
    t.match(lines[0], message)
  }
})

/**
 * The simulator run as `npm run simulate -- …` or `node dist/services/simulator/main.js …`, with
 * its lines and whether its output has closed (every process holding it gone). When the test
 * ends, any simulator left on this launcher's queue prefix is killed, an orphan of npm's too.
 */
function runSimulator(t: Test, how: 'npm' | 'node', args: string[], env: Record<string, string>): { child: ChildProcess; lines: string[]; closed: () => boolean } {
  const child = how === 'npm'
    ? spawn('npm', ['run', 'simulate', '--', ...args], { cwd: projectRoot, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), ...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  let closed = false
  child.once('close', () => (closed = true))
  t.teardown(() => {
    for (const pid of simulatorPids(env.QUEUE_PREFIX!)) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  })
  return { child, lines, closed: () => closed }
}

function simulatorPids(queuePrefix: string): number[] {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('dist/services/simulator/main.js') &&
        readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`QUEUE_PREFIX=${queuePrefix}`)
    } catch {
      return false
    }
  })
}

/**
 * What the launcher's services and the simulator said last, for a failure's diagnostics: a run
 * stuck on a machine under load shows which service exited, was restarted or refused what.
 */
function lastWords(launched: { output: () => string }, simulator: string[]) {
  return { launcher: launched.output().split('\n').slice(-40), simulator: simulator.slice(-20) }
}
