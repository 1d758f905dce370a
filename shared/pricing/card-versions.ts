import { LoadCache } from '../cache.js'
import type { RateCard } from '../courier.js'
import { loadRateCardVersion } from '../db/rate-cards.js'
import type { Sql } from '../db/sql.js'

// Versions a worker keeps in memory; each is a whole card, and few are in force at once.
const MAX_VERSIONS = 500
const KEEP_MS = 24 * 3600 * 1000

export type CardVersions = ReturnType<typeof createCardVersions>

/**
 * Rate-card versions held in memory by version id. A version never changes once imported (a
 * re-import makes a new one), so only which version is in force has to be read where it
 * matters: inside the placement's transaction, by the statement that locks the placement. A
 * card disabled or re-imported in between is seen there; the card itself comes from memory, or
 * is read once through the pool.
 */
export function createCardVersions(sql: Sql) {
  const versions = new LoadCache<string, RateCard | null>({ max: MAX_VERSIONS, ttlMs: KEEP_MS })
  return {
    /** The card of a version read in force, or null when none is enabled. */
    async get(current: { rateCardId: string; versionId: string } | null): Promise<RateCard | null> {
      if (!current) return null
      return versions.get(current.versionId, () => loadRateCardVersion(sql, current.rateCardId, current.versionId))
    },
  }
}
