/** One thing to fix in a rate-card file: where (`zones[1].polygon`, empty for the whole file) and what, in full. */
export interface RateCardProblem {
  path: string
  message: string
}

/**
 * A rate-card file the operator must fix before it can be imported: every problem found, each
 * at its path. The message is the first one (`zones[1].polygon: ring is not closed`), which the
 * CLI prints; the console shows them all in place. Nothing has been written.
 */
export class RateCardFileError extends Error {
  override name = 'RateCardFileError'

  constructor(readonly problems: RateCardProblem[]) {
    super(problems[0]?.message ?? 'the rate card is not valid')
  }
}
