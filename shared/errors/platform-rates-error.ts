/** A platform-rates change that cannot take effect (negative money, road factor below 1…). Nothing was written. */
export class PlatformRatesError extends Error {
  override name = 'PlatformRatesError'
}
