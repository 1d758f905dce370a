import type { PlatformRates } from '../courier.js'

/** A platform-rates change that cannot take effect (a rate out of its bounds). Nothing was written. */
export class PlatformRatesError extends Error {
  override name = 'PlatformRatesError'

  /** `problem` follows the rate's name (`must be a number from 1 to 3`): each caller names the rate its own way (a flag, a form's label). */
  constructor(readonly field: keyof PlatformRates, readonly problem: string) {
    super(`${field} ${problem}`)
  }
}
