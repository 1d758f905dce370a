/**
 * A rate-card file the operator must fix before it can be imported. The message names the
 * offending part (`zones[1].polygon: ring is not closed`); nothing has been written.
 */
export class RateCardFileError extends Error {
  override name = 'RateCardFileError'
}
