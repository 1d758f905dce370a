import { spawn, type ChildProcess } from 'node:child_process'
import { createServer } from 'node:net'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t, { type Test } from 'tap'
import { useTestDb } from '../helpers/db.js'
import { freePort, projectRoot, waitFor } from '../helpers/processes.js'
import { quoteRequest, shipment } from '../helpers/shipments.js'

interface Launcher {
  child: ChildProcess
  lines: string[]
  base: string
  exited: Promise<number | null>
}

/** `npm start` as built: the launcher with free ports for every service, on the test's schema. */
async function startLauncher(t: Test, env: Record<string, string>, ports?: Record<string, string>): Promise<Launcher> {
  const port = async () => String(await freePort())
  const own = ports ?? { GATEWAY_PORT: await port(), GATEWAY_OPS_PORT: await port(), PRICING_PORT: await port(), PRICING_OPS_PORT: await port(), WORKER_PORT: await port(), WORKER_OPS_PORT: await port() }
  const child = spawn(process.execPath, [path.join('dist', 'services', 'launcher', 'main.js')], {
    cwd: projectRoot,
    env: { ...process.env, ...env, ...own, PRICING_URL: `http://127.0.0.1:${own.PRICING_PORT}`, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines: string[] = []
  for (const stream of [child.stdout!, child.stderr!]) createInterface({ input: stream }).on('line', (line) => lines.push(line))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000).unref())])
    for (const pid of startedPids(lines)) killQuietly(pid)
  })
  return { child, lines, base: `http://127.0.0.1:${own.GATEWAY_PORT}`, exited }
}

/** Pids from the launcher's `launcher: worker started (pid N)` lines, newest last. */
function startedPids(lines: string[], service = '\\w+'): number[] {
  const pattern = new RegExp(`^launcher: ${service} started \\(pid (\\d+)\\)$`)
  return lines.flatMap((line) => {
    const match = pattern.exec(line)
    return match ? [Number(match[1])] : []
  })
}

function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const demoKey = (lines: string[]) => lines.map((line) => /^Demo API key: (ck_live_\w+)$/.exec(line)?.[1]).find(Boolean)

t.test('a worker killed under npm start is restarted; the others keep serving', async (t) => {
  const db = await useTestDb(t)
  const launcher = await startLauncher(t, db.env)
  t.ok(await waitFor(() => demoKey(launcher.lines) !== undefined, 60_000), 'the launcher prints the demo key once the gateway is ready')
  const key = demoKey(launcher.lines)!
  const post = (route: string, body: unknown) =>
    fetch(`${launcher.base}/v2/business/${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })

  const [firstWorker] = startedPids(launcher.lines, 'worker')
  t.ok(firstWorker, 'the launcher names each child it starts')
  process.kill(firstWorker, 'SIGKILL')

  const quote = await post('order/cost', quoteRequest())
  t.equal(quote.status, 200, 'quotes go on while the worker is down')
  t.ok(await waitFor(() => startedPids(launcher.lines, 'worker').length === 2, 10_000), 'a new worker is started')
  t.ok(launcher.lines.includes('launcher: worker exited (SIGKILL); restarting in 1 s'), 'the restart is logged with its backoff')
  const placed = await post('order', [shipment()])
  t.equal(placed.status, 201, 'the restarted worker places orders')

  const pids = startedPids(launcher.lines).filter(alive)
  t.equal(pids.length, 3, 'three services run')
  launcher.child.kill('SIGTERM')
  t.equal(await launcher.exited, 0, 'SIGTERM stops the launcher cleanly')
  t.ok(await waitFor(() => pids.every((pid) => !alive(pid)), 10_000), 'and every service with it')
})

t.test('a service that cannot start (its port is taken) stops the launcher instead of looping', async (t) => {
  const db = await useTestDb(t)
  // Whatever connects (the launcher polls the gateway's port for readiness) is hung up on.
  const taken = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => taken.listen(0, '0.0.0.0', resolve))
  const address = taken.address()
  const port = async () => String(await freePort())
  const ports = {
    GATEWAY_PORT: String(typeof address === 'object' && address ? address.port : 0),
    GATEWAY_OPS_PORT: await port(), PRICING_PORT: await port(), PRICING_OPS_PORT: await port(), WORKER_PORT: await port(), WORKER_OPS_PORT: await port(),
  }
  const launcher = await startLauncher(t, db.env, ports)
  t.equal(await launcher.exited, 1, 'the launcher exits non-zero')
  t.ok(launcher.lines.some((line) => line.includes(`port ${ports.GATEWAY_PORT} is already in use`)), 'the gateway says which port')
  t.ok(launcher.lines.some((line) => /^launcher: gateway exited \(1\) 3 times within 5 s of starting; giving up$/.test(line)), 'the launcher says it gave up')
  t.ok(await waitFor(() => startedPids(launcher.lines).every((pid) => !alive(pid)), 10_000), 'no service is left running')
  await new Promise((resolve) => taken.close(resolve))
})
