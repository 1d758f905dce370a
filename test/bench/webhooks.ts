import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Queue } from 'bullmq'
import { Redis } from 'ioredis'
import { Webhook } from 'standardwebhooks'
import { appendEvents, findOrderEvents, type StoredEvent } from '../../shared/db/events.js'
import type { Sql } from '../../shared/db/sql.js'
import { newEventId } from '../../shared/ids.js'
import { toEventResource } from '../../shared/orders/resource.js'
import { shipment } from '../helpers/shipments.js'
import { BASELINE_WEBHOOK_QUEUE, type BaselineWebhookJob } from './baselines.js'
import { cpuShares, readCpu, type Run } from './load.js'
import { errorMessage } from '../../shared/errors/error-message.js'

/*
 * The webhooks case: not requests driven for a time but a burst of N events, timed until one
 * local receiver has had every one of them. The project's events go in as rows of its outbox
 * (as a placement writes them) and come out through the webhook sender: relay, delivery rows,
 * BullMQ, signed POST, attempt log. The baseline's go straight onto a BullMQ queue with their
 * bodies, for a bare worker that signs and POSTs them (baselines.ts, role webhook-worker).
 */

/** One side's round: the ids the receiver waits for, and what starts their delivery. */
interface Burst {
  ids: string[]
  secret: string
  start: () => Promise<unknown>
  /** Attempts or jobs of this burst that failed, counted once it is delivered. */
  failures: () => Promise<number>
  /** Where the missing ones are, for the message when the deadline passes. */
  whereabouts: () => Promise<string>
}

interface Round {
  pending: Set<string>
  secret: string
  started: number
  arrivals: number[]
  others: number
  checked: boolean
  problem: string | null
  done: () => void
}

export interface Receiver {
  url: string
  close: () => Promise<void>
  expect: (burst: Pick<Burst, 'ids' | 'secret'>, started: number) => { arrived: Promise<void>; round: Round }
  reset: () => void
  /** Connections opened to it so far: few across a burst means the sender's keep-alive works. */
  connections: () => number
}

/**
 * A node:http receiver on 127.0.0.1 that answers 204 and counts deliveries by `webhook-id`,
 * which both sides send. The first delivery of each round is verified with the
 * `standardwebhooks` package, so a side that signs wrongly fails the bench rather than
 * winning it; the rest are only counted, so the receiver costs both sides the same.
 */
export async function startReceiver(): Promise<Receiver> {
  let current: Round | null = null
  const server = createServer((request, response) => {
    const round = current
    // Bodies are kept only until the round has verified one of its own deliveries.
    const keep = round !== null && !round.checked
    const chunks: Buffer[] = []
    if (keep) request.on('data', (chunk: Buffer) => chunks.push(chunk))
    else request.resume()
    request.on('end', () => {
      response.writeHead(204).end()
      if (round === null || round !== current) return
      const id = request.headers['webhook-id']
      if (keep && !round.checked && typeof id === 'string' && round.pending.has(id)) {
        round.checked = true
        round.problem = verify(round.secret, Buffer.concat(chunks).toString('utf8'), request.headers)
      }
      if (typeof id === 'string' && round.pending.delete(id)) {
        round.arrivals.push(performance.now() - round.started)
        if (round.pending.size === 0) round.done()
      } else {
        round.others++
      }
    })
  })
  // Longer than the senders' keep-alive, so neither side reconnects between its jobs.
  server.keepAliveTimeout = 30_000
  let connections = 0
  server.on('connection', () => connections++)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }),
    expect: (burst, started) => {
      let done = () => {}
      const arrived = new Promise<void>((resolve) => (done = resolve))
      current = { pending: new Set(burst.ids), secret: burst.secret, started, arrivals: [], others: 0, checked: false, problem: null, done }
      return { arrived, round: current }
    },
    reset: () => { current = null },
    connections: () => connections,
  }
}

function verify(secret: string, body: string, headers: IncomingHttpHeaders): string | null {
  try {
    new Webhook(secret).verify(body, headers as Record<string, string>)
    return null
  } catch (err) {
    return `a delivery failed Standard Webhooks verification: ${errorMessage(err)}`
  }
}

/** Times one burst until the receiver has every id, or fails once `deadlineMs` has passed. */
async function measure(label: string, receiver: Receiver, burst: Burst, options: { deadlineMs: number; processes: Record<string, number> }): Promise<Run> {
  const cpuBefore = readCpu(options.processes)
  const connectionsBefore = receiver.connections()
  const started = performance.now()
  const { arrived, round } = receiver.expect(burst, started)
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), options.deadlineMs)))
  try {
    // The start itself is bounded too: an insert stuck on a lock must not hang the bench.
    const outcome = await Promise.race([burst.start().then(() => arrived), late])
    if (outcome === 'late') {
      const missing = round.pending.size
      throw new Error(`webhooks: the ${label} delivered ${burst.ids.length - missing} of ${burst.ids.length} events within ${options.deadlineMs / 1000} s; ${await burst.whereabouts()}`)
    }
  } finally {
    clearTimeout(timer)
    receiver.reset()
  }
  if (round.problem) throw new Error(`webhooks: the ${label}: ${round.problem}`)
  const cpu = cpuShares(cpuBefore, readCpu(options.processes), (performance.now() - started) / 1000)
  // Pushed as they came, so already in order.
  const arrivals = round.arrivals
  const seconds = arrivals[arrivals.length - 1] / 1000
  const at = (share: number) => Math.round(arrivals[Math.min(arrivals.length - 1, Math.floor(share * arrivals.length))])
  const perSecond = burst.ids.length / seconds
  const requests = arrivals.length + round.others
  return {
    requestsPerSecond: perSecond,
    unitsPerSecond: perSecond,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    requests,
    non2xx: await burst.failures(),
    errors: 0,
    timeouts: 0,
    statusCodes: { 204: requests },
    cpu,
    seconds,
    connectionsOpened: receiver.connections() - connectionsBefore,
  }
}

interface WebhookCaseOptions {
  /** The project's schema, for the outbox rows and the delivery log. */
  sql: Sql
  gatewayUrl: string
  /** A key with `orders:write` (for the order the events are about) and `webhooks:write`. */
  auth: Record<string, string>
  businessId: string
  receiver: Receiver
  redisUrl: string
  baselinePrefix: string
  baselineSecret: string
  events: number
  deadlineMs: number
}

/**
 * Sets both sides up (one real order and its `order.created` event as the template of every
 * body, one endpoint at the receiver) and returns a round of each side and the clean-up.
 */
export async function webhookCase(options: WebhookCaseOptions) {
  const { sql, gatewayUrl, auth, receiver } = options
  const scope = { businessId: options.businessId, livemode: true }
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${gatewayUrl}${path}`, { method, headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) })
    const text = await response.text()
    if (!response.ok) throw new Error(`webhooks: ${method} ${path} answered ${response.status}: ${text}`)
    return text ? JSON.parse(text) : null
  }

  const placed = await api('POST', '/v2/business/order', [shipment()])
  const orderId: string = placed.orders[0].order_id
  const [template] = await findOrderEvents(sql, orderId)
  if (!template) throw new Error(`webhooks: order ${orderId} has no event`)
  // Events of the earlier cases (and this order's) not yet relayed would become deliveries once
  // the endpoint exists and load the first round; with no endpoint the relay only takes them off the outbox.
  await drainOutbox(sql, options.deadlineMs)
  const endpoint = await api('POST', '/v2/business/webhook-endpoints', { url: receiver.url, description: 'bench receiver' })

  const events = (ids: string[]): StoredEvent[] => ids.map((id, index) => ({ ...template, id, sequence: template.sequence + index + 1, createdAt: new Date() }))
  const ids = () => Array.from({ length: options.events }, () => newEventId())

  const project = async (processes: Record<string, number>): Promise<Run> => {
    const burst = ids()
    return measure('project', receiver, {
      ids: burst,
      secret: endpoint.secret,
      // As a placement writes them: numbered from the business's counter, unrelayed.
      start: () => sql.begin((tx) => appendEvents(tx, scope, events(burst), null)),
      failures: async () => {
        const [row] = await sql<{ failed: number }[]>`select count(*)::int as failed from webhook_attempts where event_id = any(${burst}) and status <> 'succeeded'`
        return row.failed
      },
      whereabouts: async () => {
        const [outbox] = await sql<{ unrelayed: number }[]>`select count(*)::int as unrelayed from events e join event_outbox o
          on e.business_id = o.business_id and e.livemode = o.livemode and e.sequence between o.first_sequence and o.last_sequence
          where e.id = any(${burst})`
        const deliveries = await sql<{ status: string; count: number }[]>`select status, count(*)::int as count from webhook_deliveries where event_id = any(${burst}) group by status`
        return `${outbox.unrelayed} events not relayed; deliveries ${JSON.stringify(Object.fromEntries(deliveries.map((row) => [row.status, row.count])))}`
      },
    }, { deadlineMs: options.deadlineMs, processes })
  }

  const producer = new Redis(options.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false })
  const queue = new Queue<BaselineWebhookJob>(BASELINE_WEBHOOK_QUEUE, { connection: producer, prefix: options.baselinePrefix })
  const baseline = async (processes: Record<string, number>): Promise<Run> => {
    const burst = ids()
    const failedBefore = (await queue.getJobCounts('failed')).failed
    return measure('baseline', receiver, {
      ids: burst,
      secret: options.baselineSecret,
      // The same bodies the sender builds from the rows, serialised here as the project serialises its insert.
      start: () => queue.addBulk(events(burst).map((event) => ({
        name: 'deliver',
        data: { id: event.id, body: JSON.stringify(toEventResource(event)) },
        opts: { removeOnComplete: true, removeOnFail: { age: 3600, count: 1000 } },
      }))),
      failures: async () => (await queue.getJobCounts('failed')).failed - failedBefore,
      whereabouts: async () => `jobs ${JSON.stringify(await queue.getJobCounts('waiting', 'active', 'delayed', 'failed'))}`,
    }, { deadlineMs: options.deadlineMs, processes })
  }

  // Without its endpoint, later cases' placements deliver nowhere, as before this case.
  const close = async () => {
    await api('DELETE', `/v2/business/webhook-endpoints/${endpoint.id}`)
    await queue.close()
    producer.disconnect()
  }
  return { project, baseline, close }
}

async function drainOutbox(sql: Sql, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    const [row] = await sql<{ unrelayed: number }[]>`select coalesce(sum(last_sequence - first_sequence + 1), 0)::int as unrelayed from event_outbox`
    if (row.unrelayed === 0) return
    if (Date.now() > deadline) throw new Error(`webhooks: ${row.unrelayed} events of the earlier cases were still not relayed after ${deadlineMs / 1000} s`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}
