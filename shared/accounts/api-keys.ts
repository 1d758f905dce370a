import { hashApiKey, insertApiKey, type ApiKeyScope } from '../db/api-keys.js'
import type { Db } from '../db/sql.js'
import { newApiKey, newUuid } from '../ids.js'

// Enough to tell keys apart in an operator's list without weakening the secret part much.
const DISPLAY_PREFIX_LENGTH = 12

export interface CreatedApiKey {
  keyId: string
  /** Shown once; only its hash is stored. */
  apiKey: string
  keyHash: string
  displayPrefix: string
  scopes: ApiKeyScope[]
  livemode: boolean
}

/**
 * Issues a new key for a business, the one step the CLI, the demo seed and tests share. A test
 * key (`livemode` false) needs the business's test wallet: `openSandbox` makes it.
 */
export async function createApiKey(db: Db, businessId: string, scopes: ApiKeyScope[], livemode = true): Promise<CreatedApiKey> {
  const apiKey = newApiKey(livemode)
  const created = {
    keyId: newUuid(),
    apiKey,
    keyHash: hashApiKey(apiKey),
    displayPrefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH),
    scopes: [...new Set(scopes)],
    livemode,
  }
  await insertApiKey(db, { keyId: created.keyId, businessId, keyHash: created.keyHash, displayPrefix: created.displayPrefix, scopes: created.scopes, livemode })
  return created
}
