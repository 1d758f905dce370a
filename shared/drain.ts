/**
 * Runs `step` for up to `size` rows again and again until it handles fewer: a sweep's work as
 * short statements, each well inside the statement timeout however much has piled up (a worker
 * down for a day, a retention lowered). Returns how many rows were handled in all.
 */
export async function drainInBatches(size: number, step: (size: number) => Promise<number>): Promise<number> {
  let total = 0
  for (;;) {
    const handled = await step(size)
    total += handled
    if (handled < size) return total
  }
}
