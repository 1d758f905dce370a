/**
 * A shipment that cannot be priced for a reason the caller can fix (no band, no zone, stale
 * option id…). The message is shown to the integrator as it is, so it never holds internals.
 */
export class PricingError extends Error {
  override name = 'PricingError'
}
