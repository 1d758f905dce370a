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
  /** The same-work baseline; none where there is no such baseline. */
  baseline?: Side
  /** The bare stack (the performance issue's second column); none for dispatch. */
  bare?: Side
  project: Side
}

/**
 * Ratios to the same-work baseline (throughput, p99) and to the bare stack (`bare`,
 * throughput), or an absolute p99 in ms (`p99Ms`).
 */
interface Target { throughput?: number; p99?: number; bare?: number; p99Ms?: number }

// The performance issue's targets, as medians of alternating rounds in one run: same-work ≥ 0.9
// with p99 ≤ 1.5× wherever a same-work baseline exists, and the bare stack's own ratio per case.
export const TARGETS: Record<string, Target | undefined> = {
  quote: { throughput: 0.9, p99: 1.5, bare: 0.65 },
  'place-1': { throughput: 0.9, p99: 1.5, bare: 0.8 },
  'place-100': { throughput: 0.9, p99: 1.5, bare: 0.55 },
  'place-1-ten': { throughput: 0.9, p99: 1.5, bare: 0.6 },
  // DESIGN 14: location pings against a bare fastify → GEOADD (and, as every case with one, against
  // the same work done the least way); order.created to the offer on the stream.
  'courier-location': { throughput: 0.9, p99: 1.5, bare: 0.8 },
  dispatch: { p99Ms: 1000 },
  webhooks: { bare: 0.5 },
}
export const RSS_TARGET_MB = 120

/** A process's resident memory in MB: before the first case, and its peak (VmHWM) at the end. */
export interface Resident { restMb: number; peakMb: number }

/**
 * The gateway's memory and, beside it, the baseline fronts' (the same libraries, each serving
 * its same-work and bare routes under the same load), so the absolute target has a reference.
 */
export interface Memory { gateway: Resident; fronts: Record<string, Resident> }

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

/** Project / baseline and project / bare, as medians of the alternating rounds; NaN without one. */
export function ratios(result: CaseResult) {
  const project = medians(result.project)
  const baseline = result.baseline && medians(result.baseline)
  const bare = result.bare && medians(result.bare)
  return {
    throughput: baseline ? project.unitsPerSecond / baseline.unitsPerSecond : NaN,
    p99: baseline ? project.p99Ms / Math.max(baseline.p99Ms, 1) : NaN,
    bare: bare ? project.unitsPerSecond / bare.unitsPerSecond : NaN,
  }
}

/** Each target of a case, with the figure it is judged on. */
function judged(result: CaseResult): Verdict[] {
  const target = TARGETS[result.name]
  const ratio = ratios(result)
  const list: Verdict[] = []
  if (target?.throughput !== undefined) list.push({ target: `${result.name} same-work ratio >= ${target.throughput}`, value: ratio.throughput, met: ratio.throughput >= target.throughput })
  if (target?.p99 !== undefined) list.push({ target: `${result.name} p99 ratio <= ${target.p99}`, value: ratio.p99, met: ratio.p99 <= target.p99 })
  if (target?.bare !== undefined) list.push({ target: `${result.name} bare ratio >= ${target.bare}`, value: ratio.bare, met: ratio.bare >= target.bare })
  if (target?.p99Ms !== undefined) {
    const p99Ms = medians(result.project).p99Ms
    list.push({ target: `${result.name} p99 <= ${target.p99Ms} ms`, value: p99Ms, met: p99Ms <= target.p99Ms })
  }
  const failures = result.project.non2xx + result.project.errors
  list.push({ target: `${result.name} project non-2xx and errors = 0`, value: failures, met: failures === 0 })
  return list
}

/** The memory target, with the figure it is judged on: what `judged` is to a case. */
function judgedMemory(memory: Memory): Verdict {
  const peak = memory.gateway.peakMb
  return { target: `gateway peak RSS <= ${RSS_TARGET_MB} MB`, value: peak, met: peak <= RSS_TARGET_MB }
}

export function verdicts(results: CaseResult[], memory: Memory): Verdict[] {
  return [...results.flatMap(judged), judgedMemory(memory)]
}

const COLUMNS = ['case', 'conns', 'side', 'per second', 'p50 ms', 'p99 ms', 'ratio', 'p99 ratio', 'bare ratio', 'non-2xx', 'target', 'met']

/** One row per side and case; the project row carries both ratios and the verdict. */
export function formatTable(results: CaseResult[], memory: Memory): string {
  const rows: string[][] = []
  for (const result of results) {
    const target = TARGETS[result.name]
    const ratio = ratios(result)
    const side = (name: string, s: Side) => {
      const m = medians(s)
      return [result.name, String(result.connections), name, `${m.unitsPerSecond.toFixed(0)} ${result.unit}`, m.p50Ms.toFixed(0), m.p99Ms.toFixed(0)]
    }
    if (result.baseline) rows.push([...side('same-work', result.baseline), '', '', '', String(result.baseline.non2xx + result.baseline.errors), '', ''])
    if (result.bare) rows.push([...side('bare', result.bare), '', '', '', String(result.bare.non2xx + result.bare.errors), '', ''])
    const stated = target && [
      target.throughput === undefined ? null : `>= ${target.throughput}`,
      target.p99 === undefined ? null : `p99 <= ${target.p99}x`,
      target.bare === undefined ? null : `bare >= ${target.bare}`,
      target.p99Ms === undefined ? null : `p99 <= ${target.p99Ms} ms`,
    ].filter(Boolean).join(', ')
    const met = judged(result).every((verdict) => verdict.met)
    rows.push([
      ...side('project', result.project),
      result.baseline ? ratio.throughput.toFixed(2) : '',
      result.baseline ? `${ratio.p99.toFixed(2)}x` : '',
      result.bare ? ratio.bare.toFixed(2) : '',
      String(result.project.non2xx + result.project.errors),
      stated || 'none',
      met ? 'yes' : 'NO',
    ])
  }
  const widths = COLUMNS.map((column, index) => Math.max(column.length, ...rows.map((row) => row[index].length)))
  const line = (cells: string[]) => `| ${cells.map((cell, index) => cell.padEnd(widths[index])).join(' | ')} |`
  const out = [line(COLUMNS), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)]
  out.push('')
  const { restMb, peakMb } = memory.gateway
  out.push(`gateway peak RSS: ${peakMb.toFixed(0)} MB (target <= ${RSS_TARGET_MB} MB: ${judgedMemory(memory).met ? 'yes' : 'NO'}), ${restMb.toFixed(0)} MB at rest`)
  const fronts = Object.entries(memory.fronts).map(([name, front]) => `${name} ${front.restMb.toFixed(0)} / ${front.peakMb.toFixed(0)} MB`)
  out.push(`baseline fronts' RSS at rest / peak (the same libraries; each serves its same-work and bare routes): ${fronts.join(', ')}`)
  out.push('per second = 2xx answers per second, the median of each side\'s measured runs (orders/s = placements/s x shipments); p50/p99 likewise medians; non-2xx counts every measured run, errors and timeouts included')
  out.push('ratio and p99 ratio: project / same-work baseline (the contract\'s work on the bare stack); bare ratio: project / the bare stack (docs/performance.md, Method)')
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
