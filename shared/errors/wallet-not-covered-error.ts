/**
 * The wallet no longer covers a debit that an earlier, unlocked read said it would: another
 * placement got in between. Thrown inside the transaction so nothing it wrote can commit.
 */
export class WalletNotCoveredError extends Error {
  override name = 'WalletNotCoveredError'
}
