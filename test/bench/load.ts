import autocannon from 'autocannon'
import { cpuSeconds, rssMb } from './processes.js'

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
  /** Share of one core each process of the side used during the run (1 = a whole core), and the bench's own (autocannon). */
  cpu: Record<string, number>
}

export interface Target {
  url: string
  headers: Record<string, string>
  body: string
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
      connections: options.connections,
      duration: options.seconds,
      timeout: 35,
    })
    sample()
    const elapsed = (performance.now() - started) / 1000
    const cpuAfter = readCpu(options.processes ?? {})
    const cpu = Object.fromEntries(Object.keys(cpuAfter).map((name) => [name, Math.round(((cpuAfter[name] - cpuBefore[name]) / elapsed) * 100) / 100]))
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

function readCpu(processes: Record<string, number>): Record<string, number> {
  const seconds: Record<string, number> = { bench: cpuSeconds(process.pid) }
  for (const [name, pid] of Object.entries(processes)) {
    try {
      seconds[name] = cpuSeconds(pid)
    } catch {
      seconds[name] = NaN
    }
  }
  return seconds
}
