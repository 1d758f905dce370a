/**
 * Runs `task` every `ms`, never two at once: a run still going when the next is due makes that
 * one skip. A failure goes to `onError` and the next run tries again. The timer does not keep
 * the process alive. The sweeps of the worker, the sandbox courier and the webhook sender.
 */
export function repeatWithoutOverlap(ms: number, task: () => Promise<void>, onError: (err: unknown) => void): NodeJS.Timeout {
  let running = false
  return setInterval(async () => {
    if (running) return
    running = true
    try {
      await task()
    } catch (err) {
      onError(err)
    } finally {
      running = false
    }
  }, ms).unref()
}
