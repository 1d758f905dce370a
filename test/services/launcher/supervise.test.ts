import { existsSync } from 'node:fs'
import path from 'node:path'
import t, { type Test } from 'tap'
import { supervise, type LivenessOptions, type ServiceSpec } from '../../../services/launcher/supervise.js'
import { freePort, waitFor, waitForValue } from '../../helpers/processes.js'

/*
 * The launcher's supervision of a child that is alive but frozen: its process stays up, its
 * event loop runs an endless loop, so only its silence on /healthz tells.
 */

// A stand-in service: answers /pid with its pid and /healthz as any service does; the first
// process to answer the watch twice then freezes in an endless loop (the marker file says it did).
const SERVICE = `
const fs = require('node:fs')
let answered = 0
const server = require('node:http').createServer((request, response) => {
  response.end(String(process.pid))
  if (request.url === '/healthz' && ++answered === 2 && !fs.existsSync(process.env.MARKER)) {
    fs.writeFileSync(process.env.MARKER, String(process.pid))
    setImmediate(() => { for (;;) {} })
  }
})
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => process.exit(0))
`

/** Supervises one stand-in for the test: what the launcher said, and whom it gave up on. */
function superviseOne(t: Test, spec: ServiceSpec, liveness: LivenessOptions): { said: string[]; gaveUp: string[] } {
  const said: string[] = []
  const gaveUp: string[] = []
  const error = console.error
  console.error = (...args: unknown[]) => said.push(args.join(' '))
  const services = supervise([spec], (name) => gaveUp.push(name), liveness)
  t.teardown(async () => {
    console.error = error
    await services.stop()
  })
  return { said, gaveUp }
}

t.test('a child that stops answering /healthz is killed and started again; the launcher says so', async (t) => {
  const port = await freePort()
  const healthUrl = `http://127.0.0.1:${port}/healthz`
  const marker = path.join(t.testdir(), 'froze')
  const pidNow = () => fetch(`http://127.0.0.1:${port}/pid`, { signal: AbortSignal.timeout(500) }).then((response) => response.text(), () => '')
  const { said, gaveUp } = superviseOne(t, { name: 'stand-in', args: ['-e', SERVICE], env: { PORT: String(port), MARKER: marker }, healthUrl }, { intervalMs: 200, timeoutMs: 300, misses: 3 })

  const first = await waitForValue(pidNow, (pid) => pid !== '', 10_000)
  t.ok(first.held, 'the child answers')
  t.ok(await waitFor(() => existsSync(marker), 10_000), 'it froze after answering the watch')

  const second = await waitForValue(pidNow, (pid) => pid !== '' && pid !== first.value, 15_000)
  t.ok(second.held, 'a new process answers')
  t.not(second.value, first.value)
  t.match(said.join('\n'), `launcher: stand-in did not answer ${healthUrl} 3 times in a row; killing it (pid ${first.value}) to restart it`)
  t.same(gaveUp, [], 'a frozen child is restarted, not given up on')
})

// A service that cannot start (its port taken) may take longer than the early-exit window to
// fail on a busy machine: it still never served, so the launcher gives up on it instead of
// restarting it for ever (a launcher test hung that way under CI's load).
t.test('a child that dies before it ever answered /healthz, however slowly, counts as a failed start', async (t) => {
  const port = await freePort()
  // Dies 300 ms after it starts, never listening: slower than this test's 100 ms window.
  const { said, gaveUp } = superviseOne(t, { name: 'slow-failer', args: ['-e', 'setTimeout(() => process.exit(3), 300)'], healthUrl: `http://127.0.0.1:${port}/healthz` }, { intervalMs: 100, timeoutMs: 100, misses: 3, earlyExitMs: 100 })
  t.ok(await waitFor(() => gaveUp.length > 0, 20_000), 'the launcher gives up')
  t.same(gaveUp, ['slow-failer'])
  t.match(said.join('\n'), 'launcher: slow-failer exited (3) 3 times in a row before it served, or within 0.1 s of starting; giving up')
})

t.test('a child that served and then died is restarted, however soon after its start', async (t) => {
  const port = await freePort()
  // Listens, and exits once the watch has had its answer.
  const service = `require('node:http').createServer((request, response) => { response.end('ok'); setTimeout(() => process.exit(4), 50) }).listen(Number(process.env.PORT), '127.0.0.1')`
  const { said, gaveUp } = superviseOne(t, { name: 'served', args: ['-e', service], env: { PORT: String(port) }, healthUrl: `http://127.0.0.1:${port}/healthz` }, { intervalMs: 100, timeoutMs: 500, misses: 3, earlyExitMs: 0 })
  t.ok(await waitFor(() => said.filter((line) => line.includes('restarting in')).length >= 3, 20_000), 'three restarts')
  t.same(gaveUp, [], 'never given up on: each run served first')
})
