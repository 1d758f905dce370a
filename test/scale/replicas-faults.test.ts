import { createServer } from 'node:net'
import t from 'tap'
import { seedAccount, type SeededAccount } from '../helpers/accounts.js'
import { kmNorth } from '../helpers/couriers.js'
import { TEST_DATABASE_URL } from '../helpers/db.js'
import { acceptAnOffer, courierOnShift, doubleAssignments } from '../helpers/http-couriers.js'
import { FAST_RECOVERY_ENV, startLauncher, type ServiceName } from '../helpers/launcher.js'
import { waitFor } from '../helpers/processes.js'
import { assertChargedOnce, assertEveryEventDelivered } from '../helpers/scale-checks.js'
import { ISLAND, shipment } from '../helpers/shipments.js'
import { startSwarm } from '../helpers/swarm.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

// DESIGN 16 "Many replicas at once": `npm start -- --replicas gateway=2,worker=3,dispatcher=2,
// webhook-sender=2` under load from several businesses (placements through both gateways,
// webhooks to a receiver, couriers taking offers) while one replica of each is killed with
// SIGKILL and the launcher starts it again. No double debit, no double assignment, every event
// delivered at least once, and any repeat a receiver sees carries an event's own webhook-id.

const REPLICAS = { gateway: 2, worker: 3, dispatcher: 2, 'webhook-sender': 2 }
const BUSINESSES = 3
const CLIENTS_PER_SWARM = 8
const ANSWERS_BEFORE_FAULT = 10
const WAIT_MS = 45_000
// Small locks and sweeps (DESIGN 17.5), so work a killed replica held is taken back within seconds.
const ENV = {
  ...FAST_RECOVERY_ENV,
  // Nine queue workers and two gateways: small pools keep them within Postgres's 100 sessions
  // beside the other test file running at once (about 50 at most).
  WORKER_CONCURRENCY: '3',
  WEBHOOK_CONCURRENCY: '3',
  DISPATCHER_CONCURRENCY: '2',
}

const SERVICES = ['GATEWAY', 'PRICING', 'WORKER', 'WEBHOOK_SENDER', 'CONSOLE', 'DISPATCHER'] as const

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * Every port setting of the launcher, from a block in which each replica's ports (the setting
 * + 10·(n−1), up to 3 replicas) are free too; below the ephemeral range other tests take from.
 */
async function replicaPorts(): Promise<Record<string, string>> {
  for (;;) {
    const base = 20000 + 200 * Math.floor(Math.random() * 50)
    const settings = Object.fromEntries(SERVICES.flatMap((service, i) => [[`${service}_PORT`, base + i], [`${service}_OPS_PORT`, base + 100 + i]]))
    const needed = Object.values(settings).flatMap((port) => [port, port + 10, port + 20])
    if ((await Promise.all(needed.map(portFree))).every(Boolean)) return Object.fromEntries(Object.entries(settings).map(([name, port]) => [name, String(port)]))
  }
}

t.test('replicas killed and restarted under load: nothing charged, assigned or lost twice', async (t) => {
  const ports = await replicaPorts()
  const receiver = await startReceiver(t)
  const launched = await startLauncher(t, {
    databaseUrl: TEST_DATABASE_URL,
    redisUrl: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    readyTimeoutMs: 100_000,
    args: ['--replicas', Object.entries(REPLICAS).map(([service, count]) => `${service}=${count}`).join(',')],
    env: { ...ENV, ...ports, PRICING_URL: `http://127.0.0.1:${ports.PRICING_PORT}`, CONSOLE_PUBLIC_URL: `http://localhost:${ports.CONSOLE_PORT}` },
  })
  const { sql } = launched
  const gateways = launched.output().split('\n').find((line) => line.startsWith('Gateways, one per replica'))?.split(': ')[1]?.split(' ') ?? []
  t.same(gateways, [`http://127.0.0.1:${ports.GATEWAY_PORT}/v2`, `http://127.0.0.1:${Number(ports.GATEWAY_PORT) + 10}/v2`], 'the launcher lists each gateway on its own port')
  for (const [service, count] of Object.entries(REPLICAS)) t.equal(launched.pids(service as ServiceName).length, count, `${count} ${service} replicas run`)
  const ready = (baseUrl: string) => fetch(baseUrl.replace(/\/v2$/, '/readyz')).then((response) => response.status === 200, () => false)
  t.ok(await waitFor(() => ready(gateways[1]!), WAIT_MS), 'the second gateway is ready')

  const accounts: SeededAccount[] = []
  for (let i = 0; i < BUSINESSES; i++) {
    const account = await seedAccount(sql, { balance: 1_000_000, scopes: ['orders:write', 'webhooks:write'], name: `Replica Stores ${i + 1}` })
    const endpoint = await fetch(`${gateways[i % gateways.length]}/business/webhook-endpoints`, {
      method: 'POST', headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: receiver.url(`/hooks/${i}`) }),
    })
    t.equal(endpoint.status, 201, `business ${i + 1} has a webhook endpoint`)
    receiver.route(`/hooks/${i}`, { secrets: [((await endpoint.json()) as { secret: string }).secret], respond: () => 204 })
    accounts.push(account)
  }
  const couriers = await Promise.all(['A', 'B', 'C'].map((name, i) => courierOnShift(gateways[i % gateways.length]!, sql, `Replica rider ${name}`, kmNorth(ISLAND, 0.3 + i))))

  // Each business places through both gateways at once.
  const swarms = accounts.flatMap((account) => gateways.map((baseUrl) => startSwarm({ baseUrl, apiKey: account.apiKey, body: [shipment()], clients: CLIENTS_PER_SWARM, deadlineMs: 80_000, requestTimeoutMs: 10000 })))
  const finished = () => swarms.reduce((sum, swarm) => sum + swarm.finished(), 0)
  t.ok(await waitFor(() => finished() >= ANSWERS_BEFORE_FAULT, WAIT_MS), 'placements are under way')

  // One replica of each kind dies at once, as on a lost machine.
  const killed = (Object.keys(REPLICAS) as ServiceName[]).map((service) => [service, launched.pids(service)[0]!] as const)
  for (const [, pid] of killed) process.kill(pid, 'SIGKILL')
  t.ok(finished() < swarms.length * CLIENTS_PER_SWARM, 'the kills land while clients are still placing')
  const restarted = await waitFor(() => killed.every(([service, pid]) => {
    const now = launched.pids(service)
    return now.length === REPLICAS[service as keyof typeof REPLICAS] && !now.includes(pid)
  }), WAIT_MS)
  t.ok(restarted, 'the launcher starts every killed replica again')
  t.ok(await waitFor(async () => (await Promise.all(gateways.map(ready))).every(Boolean), WAIT_MS), 'both gateways serve again')

  // Couriers take offers while the swarms finish. An offer made before the kills lives 10 s
  // (`DISPATCH_OFFER_S`), which the restarts can outlast on a busy machine: its accept is refused
  // and the courier takes the next.
  for (const [i, courier] of couriers.entries()) {
    const accepted = await acceptAnOffer(sql, gateways[(i + 1) % gateways.length]!, courier, WAIT_MS)
    t.equal(accepted.status, 200, `courier ${i + 1} accepts an offer`, { answer: accepted.body })
  }

  const outcomes = (await Promise.all(swarms.map((swarm) => swarm.done))).flat()
  const seen = new Map<string, number>()
  for (const swarm of swarms) for (const [status, count] of swarm.seen()) seen.set(String(status), (seen.get(String(status)) ?? 0) + count)
  t.comment(`attempts by answer: ${JSON.stringify(Object.fromEntries(seen))}; launcher: ${launched.output().split('\n').filter((line) => / exited /.test(line)).join(' | ')}`)
  t.same(outcomes.filter((outcome) => outcome.status !== 201).map((outcome) => [outcome.status, outcome.retried.slice(-3)]), [], 'every client placed its order')
  const businessIds = accounts.map((account) => account.businessId)
  await assertChargedOnce(t, sql, businessIds, outcomes.map((outcome) => ({ placementId: String(outcome.body?.placement_id), chargedKobo: Math.round(Number(outcome.body?.charged_total) * 100) })))

  const [assigned] = await sql<{ count: number }[]>`select count(*)::int as count from orders where business_id in ${sql(businessIds)} and status = 'assigned'`
  t.equal(assigned!.count, couriers.length, 'one order per courier is assigned')
  t.same(await doubleAssignments(sql, businessIds), [], 'no order has two accepted offers or two order.assigned events')

  await assertEveryEventDelivered(t, sql, receiver, businessIds, WAIT_MS)
})
