/** The courier API refused the rider's token (401): revoked, as `courier:disable` does. No retry makes it good again. */
export class TokenRefusedError extends Error {
  override name = 'TokenRefusedError'
}
