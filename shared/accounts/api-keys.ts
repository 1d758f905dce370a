import { insertAudit } from '../db/audit.js'
import { insertApiKey, type ApiKeyScope } from '../db/api-keys.js'
import { findBusiness } from '../db/businesses.js'
import type { Db, Sql } from '../db/sql.js'
import { newApiKey, newUuid } from '../ids.js'
import { openSandbox } from './sandbox.js'
import { secretHash } from '../secret-hash.js'

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
    keyHash: secretHash(apiKey),
    displayPrefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH),
    scopes: [...new Set(scopes)],
    livemode,
  }
  await insertApiKey(db, { keyId: created.keyId, businessId, keyHash: created.keyHash, displayPrefix: created.displayPrefix, scopes: created.scopes, livemode })
  return created
}

/**
 * A key for an existing business, as the CLI's `key:create` and the console's API keys page make
 * it: a test key first opens the business's test wallet with `sandboxStartKobo`. Audited as
 * `key.create` by `actor` (never the key itself). Null when the business does not exist. The
 * caller announces the new hash to the gateways.
 */
export function issueApiKey(sql: Sql, actor: string, input: { businessId: string; scopes: ApiKeyScope[]; livemode: boolean }, sandboxStartKobo: number): Promise<CreatedApiKey | null> {
  return sql.begin(async (tx) => {
    const business = await findBusiness(tx, input.businessId)
    if (!business) return null
    if (!input.livemode) await openSandbox(tx, business, sandboxStartKobo)
    const created = await createApiKey(tx, input.businessId, input.scopes, input.livemode)
    await insertAudit(tx, { actor, action: 'key.create', businessId: input.businessId, subject: created.displayPrefix, before: null, after: { key_id: created.keyId, scopes: created.scopes, livemode: created.livemode } })
    return created
  })
}
