import { createServer as createHttpServer } from 'node:http'
import { createServer } from 'node:net'
import t, { type Test } from 'tap'
import { spawnLauncher, startLauncher } from '../helpers/launcher.js'
import { freePort, waitFor } from '../helpers/processes.js'
import { quoteRequest, shipment } from '../helpers/shipments.js'

const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

t.test('a worker killed under npm start is restarted; the others keep serving', async (t) => {
  const launched = await startLauncher(t, { databaseUrl, redisUrl })
  const post = (route: string, body: unknown) => launched.business('POST', route, body)

  const [firstWorker] = launched.pids('worker')
  t.ok(launched.output().includes(`launcher: worker started (pid ${firstWorker})`), 'the launcher names each child it starts')
  process.kill(firstWorker, 'SIGKILL')

  const quote = await post('order/cost', quoteRequest())
  t.equal(quote.status, 200, 'quotes go on while the worker is down')
  const restarted = await waitFor(() => launched.pids('worker').some((pid) => pid !== firstWorker), 10_000)
  t.ok(restarted, 'a new worker is started')
  t.ok(launched.output().includes('launcher: worker exited (SIGKILL); restarting in 1 s'), 'the restart is logged with its backoff')
  const placed = await post('order', [shipment()])
  t.equal(placed.status, 201, 'the restarted worker places orders')

  // The console runs beside them, with a one-time link for each demo user.
  const consoleLine = launched.output().split('\n').find((line) => line.startsWith('Console: '))
  // On the launcher's own ports (not the defaults 3001 and 3004): the quote above reached its pricing.
  t.equal(consoleLine, `Console: http://localhost:${launched.env.CONSOLE_PORT}/console`, 'the console URL is printed, on CONSOLE_PORT')
  const links = [...launched.output().matchAll(/^ {2}(operator|business) (\S+): set a password at (\S+) \(one use, 24 h\)$/gm)]
  t.same(links.map((link) => [link[1], link[2]]), [['operator', 'operator@example.com'], ['business', 'demo@example.com']], 'a set-password link for the demo operator and the demo business user')
  const consoleUp = await waitFor(async () => (await fetch(links[0]?.[3] ?? 'http://localhost:1').then((response) => response.status, () => 0)) === 200, 20_000)
  t.ok(consoleUp, 'the operator link opens its set-password page')

  // The demo courier's token opens the courier API, and the dispatcher runs beside the rest.
  const me = await fetch(`${launched.baseUrl}/courier/me`, { headers: { authorization: `Bearer ${launched.courierToken}` } })
  t.equal(me.status, 200, 'the printed courier token is accepted')
  t.match(await me.json(), { name: 'Demo Rider', vehicle_type: 'bike', shift: 'offline' })

  const services = (['gateway', 'pricing', 'worker', 'webhook-sender', 'console', 'dispatcher'] as const).flatMap((service) => launched.pids(service))
  t.equal(services.length, 6, 'six services run')
  process.kill(launched.launcherPid, 'SIGTERM')
  t.ok(await waitFor(() => !alive(launched.launcherPid) && services.every((pid) => !alive(pid)), 10_000), 'SIGTERM stops the launcher and every service')
})

t.test('a service that cannot start (its port is taken) stops the launcher instead of looping', async (t) => {
  // Held on another address of this machine: nothing answers the launcher at 127.0.0.1, yet the
  // gateway (on 0.0.0.0) cannot bind the port, so only its own exits tell.
  const taken = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.2', resolve))
  const address = taken.address()
  const port = String(typeof address === 'object' && address ? address.port : 0)
  const launcher = await spawnLauncher(t, { databaseUrl, redisUrl, env: { GATEWAY_PORT: port } })

  t.equal(await launcher.exit, 1, 'the launcher exits non-zero')
  t.ok(launcher.lines.some((line) => line.includes(`port ${port} is already in use`)), 'the gateway says which port')
  t.ok(launcher.lines.includes('launcher: gateway exited (1) 3 times in a row before it served, or within 5 s of starting; giving up'), 'the launcher says it gave up')
  const started = launcher.lines.flatMap((line) => /^launcher: \w+ started \(pid (\d+)\)$/.exec(line)?.[1] ?? []).map(Number)
  t.ok(await waitFor(() => started.every((pid) => !alive(pid)), 10_000), 'no service is left running')
  await new Promise((resolve) => taken.close(resolve))
})

t.test('another server answering 200 on the gateway\'s port: no ready banner, one line naming the setting, exit 1', async (t) => {
  const port = await freePort()
  const other = createHttpServer((_request, response) => response.end('{"status":"ready"}'))
  await new Promise<void>((resolve, reject) => other.once('error', reject).listen(port, '0.0.0.0', resolve))
  t.teardown(() => new Promise((resolve) => {
    other.closeAllConnections()
    other.close(resolve)
  }))
  const launcher = await spawnLauncher(t, { databaseUrl, redisUrl, env: { GATEWAY_PORT: String(port) } })

  t.equal(await launcher.exit, 1, 'the launcher exits non-zero')
  t.notOk(launcher.lines.some((line) => line.startsWith('Courier API ready')), 'no banner for a server the launcher did not start')
  t.same(launcher.lines.filter((line) => line.includes(`port ${port}`)), [`launcher: gateway's port ${port} is already in use by another program; stop it or set GATEWAY_PORT to a free port`])
  t.notOk(launcher.lines.some((line) => /started \(pid/.test(line)), 'no service was started')
})

/** A free port whose port + 10 is held on `host` for the test (replica 2 of a service listens there). */
async function secondReplicaPortHeld(t: Test, host: string): Promise<number> {
  const taken = createServer((socket) => socket.destroy())
  const first = await new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject).listen(0, '0.0.0.0', () => {
      const address = probe.address()
      const port = typeof address === 'object' && address ? address.port : 0
      probe.close(() => resolve(port))
    })
  })
  await new Promise<void>((resolve, reject) => taken.once('error', reject).listen(first + 10, host, resolve))
  t.teardown(() => new Promise((resolve) => taken.close(resolve)))
  return first
}

t.test('a second gateway whose port another program answers on: the launcher names it before starting anything', async (t) => {
  const first = await secondReplicaPortHeld(t, '0.0.0.0')
  const launcher = await spawnLauncher(t, { databaseUrl, redisUrl, env: { GATEWAY_PORT: String(first) }, args: ['--replicas', 'gateway=2'] })

  t.equal(await launcher.exit, 1, 'the launcher exits non-zero')
  t.ok(launcher.lines.includes(`launcher: gateway#2's port ${first + 10} is already in use by another program; stop it or set GATEWAY_PORT to a free port (replica 2 takes GATEWAY_PORT + 10)`), 'the launcher names the second gateway, its port and the setting that moves it')
  t.notOk(launcher.lines.some((line) => line.startsWith('Courier API ready')), 'no banner says the API is ready while a gateway it names is not')
})

t.test('a second gateway that cannot start: no ready banner, and the launcher stops', async (t) => {
  // Held on another address of this machine: the launcher's check at 127.0.0.1 sees nothing, yet
  // replica 2 (on 0.0.0.0) cannot bind, so only its own exits tell, while the first one serves.
  const first = await secondReplicaPortHeld(t, '127.0.0.2')
  const launcher = await spawnLauncher(t, { databaseUrl, redisUrl, env: { GATEWAY_PORT: String(first) }, args: ['--replicas', 'gateway=2'] })

  t.equal(await launcher.exit, 1, 'the launcher exits non-zero')
  t.ok(launcher.lines.some((line) => line.includes(`port ${first + 10} is already in use; stop what holds it`)), 'the second gateway says which port')
  t.notOk(launcher.lines.some((line) => line.startsWith('Courier API ready')), 'no banner says the API is ready while a gateway it names is not')
})

t.test('a database the launcher cannot prepare (no such role) is one line naming where, and exit 1, before any service starts', async (t) => {
  const elsewhere = new URL(databaseUrl)
  elsewhere.username = 'no_such_role'
  const launcher = await spawnLauncher(t, { databaseUrl: elsewhere.toString(), redisUrl })
  t.equal(await launcher.exit, 1)
  const said = launcher.lines.filter((line) => line.startsWith('launcher: cannot prepare the database'))
  t.same(said, [`launcher: cannot prepare the database at ${elsewhere.hostname}:${elsewhere.port || '5432'}${elsewhere.pathname}: role "no_such_role" does not exist`])
  t.notOk(launcher.lines.some((line) => /^\s+at /.test(line)), 'no stack trace')
  t.notOk(launcher.lines.some((line) => /started \(pid/.test(line)), 'no service was started')
})

t.test('a Redis at another address that does not answer is one line naming where, without its password, and exit 1, before any service starts', async (t) => {
  // 127.0.0.2 is this machine but not an address the launcher counts as its own (it would start a
  // redis-server for 127.0.0.1): it leaves that Redis to whoever runs it, and nothing listens there.
  const port = await freePort()
  const launcher = await spawnLauncher(t, { databaseUrl, redisUrl: `redis://courier:s3cret@127.0.0.2:${port}` })
  // A deadline, not a wait for ever: a launcher that carries on without Redis never exits by itself.
  const stopped = await Promise.race([launcher.exit, new Promise<string>((resolve) => setTimeout(resolve, 60_000, 'still running after 60 s').unref())])
  t.equal(stopped, 1, 'the launcher exits 1')
  t.same(launcher.lines.filter((line) => line.startsWith('launcher:')), [`launcher: Redis at 127.0.0.2:${port} cannot be reached: connect ECONNREFUSED 127.0.0.2:${port}`])
  t.notOk(launcher.lines.some((line) => line.includes('s3cret')), 'no password')
  t.notOk(launcher.lines.some((line) => /^\s+at /.test(line)), 'no stack trace')
  t.notOk(launcher.lines.some((line) => /started \(pid/.test(line)), 'no service was started')
})
