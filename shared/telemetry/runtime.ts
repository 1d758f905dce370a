import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import type { Meter } from '@opentelemetry/api'

const GC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1]

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
}

/** A GC entry's kind (its `detail.kind`, one of four constants). */
function gcKind(detail: unknown): string {
  const kind = typeof detail === 'object' && detail !== null && 'kind' in detail ? detail.kind : undefined
  return (typeof kind === 'number' ? GC_KINDS[kind] : undefined) ?? 'other'
}

/**
 * The process's own signals for the "queues, pools, GC and memory" dashboard: memory by kind,
 * each garbage collection's pause by kind, the event loop's delay since the last scrape, and CPU
 * time. Every label set is fixed. Returns a stop for the observers it started.
 */
export function observeRuntime(meter: Meter): { stop: () => void } {
  meter.createObservableGauge('courier_process_memory_bytes', { description: 'Process memory by kind (rss, heap_total, heap_used, external, array_buffers)' }).addCallback((result) => {
    const usage = process.memoryUsage()
    result.observe(usage.rss, { kind: 'rss' })
    result.observe(usage.heapTotal, { kind: 'heap_total' })
    result.observe(usage.heapUsed, { kind: 'heap_used' })
    result.observe(usage.external, { kind: 'external' })
    result.observe(usage.arrayBuffers, { kind: 'array_buffers' })
  })

  meter.createObservableCounter('courier_process_cpu_seconds', { description: 'CPU time used by the process, by mode (user, system)' }).addCallback((result) => {
    const { user, system } = process.cpuUsage()
    result.observe(user / 1e6, { mode: 'user' })
    result.observe(system / 1e6, { mode: 'system' })
  })

  const gcPauses = meter.createHistogram('courier_nodejs_gc_duration_seconds', { description: 'Garbage collection pauses by kind (major, minor, incremental, weakcb)', advice: { explicitBucketBoundaries: GC_BUCKETS } })
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcPauses.record(entry.duration / 1000, { kind: gcKind('detail' in entry ? entry.detail : undefined) })
    }
  })
  gc.observe({ entryTypes: ['gc'] })

  // The delay is measured between scrapes: each scrape reads it and starts it afresh.
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  meter.createObservableGauge('courier_nodejs_eventloop_delay_seconds', { description: 'Event loop delay since the previous scrape, by statistic (p50, p99, max)' }).addCallback((result) => {
    if (delay.count === 0) return
    result.observe(delay.percentile(50) / 1e9, { stat: 'p50' })
    result.observe(delay.percentile(99) / 1e9, { stat: 'p99' })
    result.observe(delay.max / 1e9, { stat: 'max' })
    delay.reset()
  })

  return {
    stop: () => {
      gc.disconnect()
      delay.disable()
    },
  }
}
