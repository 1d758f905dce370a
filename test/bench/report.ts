import type { Run } from './load.js'

export interface Side {
  best: Run
  medianUnitsPerSecond: number
  non2xx: number
  errors: number
  runs: Run[]
}

export interface CaseResult {
  name: string
  /** autocannon's connections, or the workers' concurrency for the webhooks case. */
  connections: number
  unit: string
  /** Length of a timed run; for the webhooks case, which delivers a fixed count, its deadline. */
  seconds: number
  /** None for a case whose target is absolute (dispatch). */
  baseline?: Side
  project: Side
}

/** Ratios to the baseline (throughput, p99), or an absolute p99 in ms (`p99Ms`). */
interface Target { throughput?: number; p99?: number; p99Ms?: number }

/**
 * The targets, as ratios project / baseline on this machine. The webhooks case has
 * none yet: it reports its ratio, and only its failures count against it.
 */
// Issue 13's targets, as medians of alternating rounds in one run.
export const TARGETS: Record<string, Target | undefined> = {
  quote: { throughput: 0.8, p99: 2 },
  'place-1': { throughput: 0.8 },
  'place-100': { throughput: 0.8 },
  'place-1-ten': { throughput: 0.7, p99: 2 },
  // DESIGN 14: location pings against a bare fastify → GEOADD; order.created to the offer on the stream.
  'courier-location': { throughput: 0.8 },
  dispatch: { p99Ms: 1000 },
}
export const RSS_TARGET_MB = 150

export interface Verdict {
  target: string
  value: number
  met: boolean
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** A side's medians over its measured runs: what the targets are stated in. */
export function medians(side: Side) {
  return {
    unitsPerSecond: median(side.runs.map((run) => run.unitsPerSecond)),
    p50Ms: median(side.runs.map((run) => run.p50Ms)),
    p99Ms: median(side.runs.map((run) => run.p99Ms)),
  }
}

/** Project / baseline, as medians of the alternating rounds; NaN without a baseline. */
export function ratios(result: CaseResult) {
  const project = medians(result.project)
  if (!result.baseline) return { throughput: NaN, p99: NaN }
  const baseline = medians(result.baseline)
  return {
    throughput: project.unitsPerSecond / baseline.unitsPerSecond,
    p99: project.p99Ms / Math.max(baseline.p99Ms, 1),
  }
}

export function verdicts(results: CaseResult[], gatewayPeakRssMb: number): Verdict[] {
  const list: Verdict[] = []
  for (const result of results) {
    const target = TARGETS[result.name]
    const ratio = ratios(result)
    if (target?.throughput !== undefined) list.push({ target: `${result.name} throughput ratio >= ${target.throughput}`, value: ratio.throughput, met: ratio.throughput >= target.throughput })
    if (target?.p99 !== undefined) list.push({ target: `${result.name} p99 ratio <= ${target.p99}`, value: ratio.p99, met: ratio.p99 <= target.p99 })
    if (target?.p99Ms !== undefined) {
      const p99Ms = medians(result.project).p99Ms
      list.push({ target: `${result.name} p99 <= ${target.p99Ms} ms`, value: p99Ms, met: p99Ms <= target.p99Ms })
    }
    const failures = result.project.non2xx + result.project.errors
    list.push({ target: `${result.name} project non-2xx and errors = 0`, value: failures, met: failures === 0 })
  }
  list.push({ target: `gateway peak RSS <= ${RSS_TARGET_MB} MB`, value: gatewayPeakRssMb, met: gatewayPeakRssMb <= RSS_TARGET_MB })
  return list
}

const COLUMNS = ['case', 'conns', 'side', 'per second', 'p50 ms', 'p99 ms', 'ratio', 'p99 ratio', 'non-2xx', 'target', 'met']

/** One row per side and case; the project row carries the ratios and the verdict. */
export function formatTable(results: CaseResult[], gatewayPeakRssMb: number): string {
  const rows: string[][] = []
  for (const result of results) {
    const target = TARGETS[result.name]
    const ratio = ratios(result)
    const side = (name: string, s: Side) => {
      const m = medians(s)
      return [result.name, String(result.connections), name, `${m.unitsPerSecond.toFixed(0)} ${result.unit}`, m.p50Ms.toFixed(0), m.p99Ms.toFixed(0)]
    }
    if (result.baseline) rows.push([...side('baseline', result.baseline), '', '', String(result.baseline.non2xx + result.baseline.errors), '', ''])
    const clean = result.project.non2xx + result.project.errors === 0
    const p99Ms = medians(result.project).p99Ms
    const met = target && (target.throughput === undefined || ratio.throughput >= target.throughput) && (target.p99 === undefined || ratio.p99 <= target.p99)
      && (target.p99Ms === undefined || p99Ms <= target.p99Ms) && clean
    const stated = target && [
      target.throughput === undefined ? null : `>= ${target.throughput}`,
      target.p99 === undefined ? null : `p99 <= ${target.p99}x`,
      target.p99Ms === undefined ? null : `p99 <= ${target.p99Ms} ms`,
    ].filter(Boolean).join(', ')
    rows.push([
      ...side('project', result.project),
      result.baseline ? ratio.throughput.toFixed(2) : '',
      result.baseline ? `${ratio.p99.toFixed(2)}x` : '',
      String(result.project.non2xx + result.project.errors),
      stated || 'none',
      // No target: only failures make the row a miss.
      target ? (met ? 'yes' : 'NO') : clean ? '-' : 'NO',
    ])
  }
  const widths = COLUMNS.map((column, index) => Math.max(column.length, ...rows.map((row) => row[index].length)))
  const line = (cells: string[]) => `| ${cells.map((cell, index) => cell.padEnd(widths[index])).join(' | ')} |`
  const out = [line(COLUMNS), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)]
  out.push('')
  out.push(`gateway peak RSS: ${gatewayPeakRssMb.toFixed(0)} MB (target <= ${RSS_TARGET_MB} MB: ${gatewayPeakRssMb <= RSS_TARGET_MB ? 'yes' : 'NO'})`)
  out.push('per second = 2xx answers per second, the median of each side\'s measured runs (orders/s = placements/s x shipments); p50/p99 likewise medians; non-2xx counts every measured run, errors and timeouts included')
  if (results.some((result) => result.name === 'webhooks')) {
    out.push('webhooks: events delivered per second from their insertion (project) or enqueueing (baseline) until the receiver had the last; conns = worker concurrency; p50/p99 = time from that start until half / 99 % had arrived; non-2xx = attempts or jobs that failed')
  }
  if (results.some((result) => result.name === 'courier-location')) {
    out.push('courier-location: 204 answers per second; each request carries the next of many couriers\' tokens, so no courier pings twice within a second')
  }
  if (results.some((result) => result.name === 'dispatch')) {
    out.push('dispatch: placements per second (one order each) with couriers accepting and delivering; conns = couriers on their streams; p50/p99 = order created_at to the `offer` event read on the courier\'s stream; non-2xx = placements and courier calls refused, plus orders with no offer by the deadline')
  }
  return out.join('\n')
}
