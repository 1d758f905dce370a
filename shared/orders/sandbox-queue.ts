import type { JobsOptions } from 'bullmq'

export const SANDBOX_QUEUE = 'sandbox'

/** One step of the sandbox courier: the order and the version it expects to find it at. */
export interface SandboxJob {
  order_id: string
  version: number
}

/** One job per (order, version): a step queued twice runs once. */
export function sandboxJobId(job: SandboxJob): string {
  return `sandbox:${job.order_id}:${job.version}`
}

export function sandboxJobOptions(job: SandboxJob, delayMs: number): JobsOptions {
  return {
    jobId: sandboxJobId(job),
    delay: Math.max(0, Math.round(delayMs)),
    attempts: 5,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: true,
    removeOnFail: { age: 3600, count: 1000 },
  }
}
