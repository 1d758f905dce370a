/**
 * A shipment that cannot be priced for a reason the caller can fix (no band, no zone, stale
 * option id…). The message is shown to the integrator as it is, so it never holds internals.
 */
export class PricingError extends Error {
  override name = 'PricingError'

  /**
   * `field`: the request field the message is about, and begins with (`option_id …`, `weight …`);
   * in a batch such a message starts with `[i].` (DESIGN 13.9). Null for the rest (no card, zones).
   */
  constructor(message: string, readonly field: string | null = null) {
    super(message)
  }
}
