import type { SourcePosition } from '../json-source.js'

/**
 * One thing to fix in a rate-card file: where (`zones[1].polygon`, empty for the whole file),
 * what, in full, and, for a file read as uploaded, its line and column in that text (of the
 * nearest enclosing part when the file lacks the one named); null for a file given as a value.
 */
export interface RateCardProblem {
  path: string
  message: string
  at: SourcePosition | null
}

/**
 * A rate-card file the operator must fix before it can be imported: its problems, each at its
 * path, the first `MAX_LISTED_PROBLEMS` listed and the rest counted in `unlisted`. The message is
 * the first one (`zones[1].polygon: ring is not closed`); the CLI and the console list them all.
 * Nothing has been written.
 */
export class RateCardFileError extends Error {
  override name = 'RateCardFileError'

  constructor(readonly problems: RateCardProblem[], readonly unlisted: number) {
    super(problems[0]?.message ?? 'the rate card is not valid')
  }
}

/** How many problems a refusal lists: enough to fix a file in one go, few enough to keep the page and the work small. */
export const MAX_LISTED_PROBLEMS = 100
