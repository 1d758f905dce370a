import { readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import t, { type Test } from 'tap'
import { startMetrics } from '../../../shared/telemetry/metrics-endpoint.js'
import { withDeadline } from '../../../shared/deadline.js'
import { errorCode, errorMessage } from '../../../shared/errors/error-message.js'
import { useTestDb } from '../../helpers/db.js'
import { startBuiltService } from '../../helpers/processes.js'

// The ops port is Prometheus's only view of a service. `0` (as the tests and any "pick a free
// port" deployment set it) must mean a free port, not the exporter's default 9464, and a port
// that cannot be taken must stop the service instead of leaving Prometheus to scrape whatever
// holds it.

/** A TCP server holding a port, hanging up on whoever connects; closed at the end of `t`. */
async function holdPort(t: Test): Promise<number> {
  const holder = createServer((socket) => socket.destroy())
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => holder.close(resolve)))
  const address = holder.address()
  return typeof address === 'object' && address !== null ? address.port : 0
}

t.test('an ops port of 0 is a free port of its own: two endpoints in one process both serve /metrics', async (t) => {
  const first = await startMetrics(0, '127.0.0.1')
  const second = await startMetrics(0, '127.0.0.1')
  t.teardown(async () => { await first.close(); await second.close() })
  t.not(first.port, second.port, 'each has its own port')
  for (const endpoint of [first, second]) {
    const scrape = await fetch(`http://127.0.0.1:${endpoint.port}/metrics`)
    t.equal(scrape.status, 200, `port ${endpoint.port} serves /metrics`)
    t.match(await scrape.text(), /^# HELP /m, 'in the exposition format')
    t.equal((await fetch(`http://127.0.0.1:${endpoint.port}/`)).status, 404, 'and nothing else')
  }
})

t.test('target_info names the release each replica runs: the package version, or the one the deployment sets', async (t) => {
  const version = /"version":\s*"([^"]+)"/.exec(readFileSync(new URL('../../../../package.json', import.meta.url), 'utf8'))?.[1]
  const targetInfo = async (endpoint: { port: number }) => /^target_info\{(.*)\} 1$/m.exec(await (await fetch(`http://127.0.0.1:${endpoint.port}/metrics`)).text())?.[1] ?? ''
  const plain = await startMetrics(0, '127.0.0.1', 'courier-test')
  t.teardown(() => plain.close())
  const labels = await targetInfo(plain)
  t.ok(version && labels.includes(`service_version="${version}"`), `service_version ${String(version)}: ${labels}`)
  t.ok(labels.includes('service_name="courier-test"'), 'beside its service name')
  process.env.OTEL_RESOURCE_ATTRIBUTES = 'service.version=0.1.0+abc1234'
  t.teardown(() => { delete process.env.OTEL_RESOURCE_ATTRIBUTES })
  const tagged = await startMetrics(0, '127.0.0.1', 'courier-test')
  t.teardown(() => tagged.close())
  t.match(await targetInfo(tagged), /service_version="0\.1\.0\+abc1234"/, 'OTEL_RESOURCE_ATTRIBUTES wins')
})

t.test('a port another process holds is refused, not served in silence', async (t) => {
  const port = await holdPort(t)
  const refused = await startMetrics(port, '127.0.0.1').then(() => null, (err: unknown) => errorCode(err))
  t.equal(refused, 'EADDRINUSE', 'startMetrics rejects with the listen error')
})

t.test('a service whose ops port is taken stops with one line naming it', async (t) => {
  const { env } = await useTestDb(t)
  const port = await holdPort(t)
  const pricing = startBuiltService(t, 'services/pricing/main.js', { ...env, PRICING_PORT: '0', PRICING_OPS_PORT: String(port) })
  let stderr = ''
  pricing.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  // Start-up takes well under a second; a service that serves on in silence never exits.
  const code = await withDeadline(new Promise<number | null>((resolve) => pricing.once('exit', resolve)), 30_000).catch((err: unknown) => errorMessage(err))
  t.equal(code, 1, 'exit 1')
  t.equal(stderr.trim(), `pricing: ops port ${port} is already in use; stop what holds it or set another port`, 'one line, naming the ops port')
})
