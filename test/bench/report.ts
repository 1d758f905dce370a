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
  connections: number
  unit: string
  seconds: number
  baseline: Side
  project: Side
}

/** The issue's targets, as ratios project / baseline on this machine. */
export const TARGETS: Record<string, { throughput: number; p99?: number }> = {
  quote: { throughput: 0.8, p99: 2 },
  'place-1': { throughput: 0.7 },
  'place-100': { throughput: 0.7 },
}
export const RSS_TARGET_MB = 200

export interface Verdict {
  target: string
  value: number
  met: boolean
}

export function ratios(result: CaseResult) {
  return {
    throughput: result.project.best.unitsPerSecond / result.baseline.best.unitsPerSecond,
    p99: result.project.best.p99Ms / Math.max(result.baseline.best.p99Ms, 1),
  }
}

export function verdicts(results: CaseResult[], gatewayPeakRssMb: number): Verdict[] {
  const list: Verdict[] = []
  for (const result of results) {
    const target = TARGETS[result.name]
    const ratio = ratios(result)
    list.push({ target: `${result.name} throughput ratio >= ${target.throughput}`, value: ratio.throughput, met: ratio.throughput >= target.throughput })
    if (target.p99 !== undefined) list.push({ target: `${result.name} p99 ratio <= ${target.p99}`, value: ratio.p99, met: ratio.p99 <= target.p99 })
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
    const side = (name: string, s: Side) => [result.name, String(result.connections), name, `${s.best.unitsPerSecond.toFixed(0)} ${result.unit}`, s.best.p50Ms.toFixed(0), s.best.p99Ms.toFixed(0)]
    rows.push([...side('baseline', result.baseline), '', '', String(result.baseline.non2xx + result.baseline.errors), '', ''])
    const met = ratio.throughput >= target.throughput && (target.p99 === undefined || ratio.p99 <= target.p99) && result.project.non2xx + result.project.errors === 0
    rows.push([
      ...side('project', result.project),
      ratio.throughput.toFixed(2),
      `${ratio.p99.toFixed(2)}x`,
      String(result.project.non2xx + result.project.errors),
      `>= ${target.throughput}${target.p99 === undefined ? '' : `, p99 <= ${target.p99}x`}`,
      met ? 'yes' : 'NO',
    ])
  }
  const widths = COLUMNS.map((column, index) => Math.max(column.length, ...rows.map((row) => row[index].length)))
  const line = (cells: string[]) => `| ${cells.map((cell, index) => cell.padEnd(widths[index])).join(' | ')} |`
  const out = [line(COLUMNS), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...rows.map(line)]
  out.push('')
  out.push(`gateway peak RSS: ${gatewayPeakRssMb.toFixed(0)} MB (target <= ${RSS_TARGET_MB} MB: ${gatewayPeakRssMb <= RSS_TARGET_MB ? 'yes' : 'NO'})`)
  out.push('per second = 2xx answers per second of the best run of each side (orders/s = placements/s x shipments); p50/p99 of that run; non-2xx counts every measured run, errors and timeouts included')
  return out.join('\n')
}
