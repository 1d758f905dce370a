/**
 * Rejects when `work` has not settled within `ms`. The work itself goes on: callers use this
 * where waiting longer would hang a request or a shutdown, and what lands late is harmless.
 */
export function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms) })
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer))
}
