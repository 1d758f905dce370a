import type { Queue, Worker } from 'bullmq'
import { instruments } from './telemetry/metrics.js'
import { readForScrape, UNREAD } from './telemetry/scrape-read.js'

// A BullMQ worker that stops taking jobs while jobs are due (seen after a Redis Cluster master
// fails over: docs/scaling.md) is alive to every other check. This watch tells: its `/healthz`
// then answers 503, and the launcher or Kubernetes restarts the process, which takes jobs again.

const CHECK_MS = 5000

export interface WorkerLiveness {
  /** False once jobs have been due for `stuckMs` while the worker started none. */
  taking(): boolean
  /** Stops the watch (it stops by itself when its worker closes). */
  close(): void
}

/**
 * Watches `worker` on `queue`: every few seconds, if it has started no job for `stuckMs`, it asks
 * the queue whether anything is due (waiting, or delayed past its time by more than `stuckMs`).
 * Nothing due is an idle worker, not a stuck one. `stuckMs` is well above the longest job (a
 * webhook POST's timeout), so a worker whose every slot is busy is never taken for stuck.
 */
export function watchWorker(worker: Worker, queue: Queue, stuckMs: number): WorkerLiveness {
  let lastStart = Date.now()
  let stuck = false
  worker.on('active', () => {
    lastStart = Date.now()
    stuck = false
  })

  const timer = setInterval(() => {
    const now = Date.now()
    if (now - lastStart < stuckMs) return
    Promise.all([queue.getJobCountByTypes('wait', 'prioritized'), queue.getDelayedCount(now - stuckMs)]).then(([waiting, overdue]) => {
      if (waiting + overdue === 0) lastStart = Date.now()
      else stuck = Date.now() - lastStart >= stuckMs
    }, () => {
      // Redis out of reach: readiness says so; this watch judges only a worker that could work.
    })
  }, Math.min(CHECK_MS, stuckMs / 2))
  timer.unref()
  worker.on('closed', () => clearInterval(timer))
  return { taking: () => !stuck, close: () => clearInterval(timer) }
}

const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const

/**
 * `courier_queue_jobs{queue, state}`: the jobs of each queue a process consumes by state, read
 * from Redis when Prometheus scrapes (one gauge for them all). `waiting` is every job ready for a
 * worker, prioritized ones included (BullMQ keeps those apart: the dispatcher's wakes), so
 * backlog alerts see them.
 */
export function observeQueueJobs(...queues: Queue[]): void {
  instruments().meter.createObservableGauge('courier_queue_jobs', { description: 'Jobs by queue and state' }).addCallback(async (result) => {
    await Promise.all(queues.map(async (queue) => {
      const counts = await readForScrape(() => queue.getJobCounts(...QUEUE_STATES, 'prioritized'))
      for (const state of QUEUE_STATES) {
        const count = counts === null ? UNREAD : (counts[state] ?? 0) + (state === 'waiting' ? counts.prioritized ?? 0 : 0)
        result.observe(count, { queue: queue.name, state })
      }
    }))
  })
}
