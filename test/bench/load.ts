import autocannon from 'autocannon'
import type { DispatchFigures } from './couriers.js'
import { cpuSeconds, cpuSecondsByCommand, machineCpuSeconds, rssMb } from './processes.js'

export interface Run {
  /** Requests answered per second, averaged over the run. */
  requestsPerSecond: number
  /** Units per second: requests × shipments per request for a placement. */
  unitsPerSecond: number
  p50Ms: number
  p99Ms: number
  requests: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodes: Record<string, number>
  /** Highest resident set of the watched process during the run, MB. */
  peakRssMb?: number
  /** Share of one core each process of the side used during the run (1 = a whole core), and the bench's own (autocannon, or the webhook receiver). */
  cpu: Record<string, number>
  /** How long a run that delivers a fixed count took (the webhooks case), seconds. */
  seconds?: number
  /** Connections the webhooks receiver accepted during the run. */
  connectionsOpened?: number
  /** The dispatch case's own figures. */
  dispatch?: DispatchFigures
}

export interface Target {
  url: string
  headers: Record<string, string>
  body: string
  /** Headers per caller, handed to the connections in turn: several businesses placing at once. */
  spread?: Record<string, string>[]
  /** Headers per request, handed out in turn across every connection: many callers, each calling seldom (couriers' pings). */
  rotate?: RoundRobin
}

/**
 * Callers' headers in turn, one per request. A side keeps its own across its runs: a run that
 * started over from the first caller would reach again the callers the side's last run reached
 * just before it ended (a courier pinging twice within a second, refused 429).
 */
export class RoundRobin {
  private next = 0
  constructor(private readonly callers: readonly Record<string, string>[]) {}
  headers(): Record<string, string> {
    return this.callers[this.next++ % this.callers.length] ?? {}
  }
}

/**
 * Drives one target with autocannon for `seconds`, optionally sampling a process's resident
 * set meanwhile (the gateway's, for the memory target).
 */
export async function drive(target: Target, options: { connections: number; seconds: number; unitsPerRequest: number; watchPid?: number; processes?: Record<string, number> }): Promise<Run> {
  let peak = 0
  const sample = () => {
    if (options.watchPid === undefined) return
    try {
      peak = Math.max(peak, rssMb(options.watchPid))
    } catch {
      // The process is gone; the bench notices that on its own.
    }
  }
  const sampler = options.watchPid === undefined ? null : setInterval(sample, 200)
  const cpuBefore = readCpu(options.processes ?? {})
  const started = performance.now()
  try {
    const result = await autocannon({
      url: target.url,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...target.headers },
      body: target.body,
      ...(target.spread && { setupClient: spreadOver(target, target.spread) }),
      ...(target.rotate && { requests: [{ setupRequest: rotateOver(target.rotate) }] }),
      connections: options.connections,
      duration: options.seconds,
      timeout: 35,
    })
    sample()
    const elapsed = (performance.now() - started) / 1000
    const cpuAfter = readCpu(options.processes ?? {})
    const cpu = cpuShares(cpuBefore, cpuAfter, elapsed)
    const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, { count }]) => [code, count]))
    const requests = Object.values(statusCodes).reduce((sum, count) => sum + count, 0)
    // Averaged over the whole run rather than autocannon's per-second mean, which misses the partial last second.
    const requestsPerSecond = result['2xx'] / (result.duration || options.seconds)
    return {
      requestsPerSecond,
      unitsPerSecond: requestsPerSecond * options.unitsPerRequest,
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      requests,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      statusCodes,
      cpu,
      ...(options.watchPid === undefined ? {} : { peakRssMb: peak }),
    }
  } finally {
    if (sampler) clearInterval(sampler)
  }
}

/** CPU seconds so far of the whole machine, of the bench itself, of Postgres and Redis (all their processes), and of each named process (NaN for one that is gone). */
export function readCpu(processes: Record<string, number>): Record<string, number> {
  // Postgres and Redis serve both sides; their share shows how much each side asks of them. A
  // Postgres process that ends during the run (an autovacuum worker) takes its time with it, so
  // `machine`, everything the cores did, is the figure to compare sides by.
  const shared = cpuSecondsByCommand(['postgres', 'redis-server'])
  const seconds: Record<string, number> = { machine: machineCpuSeconds(), bench: cpuSeconds(process.pid), ...shared }
  for (const [name, pid] of Object.entries(processes)) {
    try {
      seconds[name] = cpuSeconds(pid)
    } catch {
      seconds[name] = NaN
    }
  }
  return seconds
}

/** Share of one core each process used between two readings `elapsed` seconds apart. */
export function cpuShares(before: Record<string, number>, after: Record<string, number>, elapsed: number): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((name) => [name, Math.round(((after[name] - before[name]) / elapsed) * 100) / 100]))
}

/** Gives each request the next caller's headers, going on from where the side's last run stopped. */
function rotateOver(callers: RoundRobin) {
  return (request: { headers?: Record<string, string> }) => {
    request.headers = { ...request.headers, ...callers.headers() }
    return request
  }
}

/** Gives each new connection the next caller's headers, round robin. */
function spreadOver(target: Target, callers: Record<string, string>[]) {
  let next = 0
  return (client: { setHeaders(headers: Record<string, string>): void }) => {
    client.setHeaders({ 'content-type': 'application/json', ...target.headers, ...callers[next++ % callers.length] })
  }
}
