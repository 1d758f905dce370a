import { createHash, randomInt, randomUUID } from 'node:crypto'
import type { Db } from './sql.js'

export const API_KEY_SCOPES = ['orders:write', 'orders:read'] as const
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

const KEY_PREFIX = 'ck_live_'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
// Enough to tell keys apart in an operator's list without weakening the secret part much.
const DISPLAY_PREFIX_LENGTH = 12

/** The only form of a key the database ever sees: SHA-256, hex. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex')
}

/** `ck_live_` + 32 base62 characters; randomInt avoids the modulo bias of bytes % 62. */
export function generateApiKey(): string {
  let secret = ''
  for (let i = 0; i < 32; i++) secret += BASE62[randomInt(BASE62.length)]
  return KEY_PREFIX + secret
}

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value)
}

export interface CreatedApiKey {
  keyId: string
  /** Shown once; only its hash is stored. */
  apiKey: string
  keyHash: string
  displayPrefix: string
  scopes: ApiKeyScope[]
}

export async function createApiKey(db: Db, businessId: string, scopes: ApiKeyScope[]): Promise<CreatedApiKey> {
  const apiKey = generateApiKey()
  const created = {
    keyId: randomUUID(),
    apiKey,
    keyHash: hashApiKey(apiKey),
    displayPrefix: apiKey.slice(0, DISPLAY_PREFIX_LENGTH),
    scopes: [...new Set(scopes)],
  }
  await db`
    insert into api_keys (id, business_id, key_hash, display_prefix, scopes)
    values (${created.keyId}, ${businessId}, ${created.keyHash}, ${created.displayPrefix}, ${created.scopes})`
  return created
}

export interface RevokedApiKey {
  keyId: string
  keyHash: string
  revokedAt: Date
}

/**
 * Revokes a key; revoking it again keeps the first revocation time. Null for an unknown id.
 */
export async function revokeApiKey(db: Db, keyId: string): Promise<RevokedApiKey | null> {
  const [row] = await db<{ id: string; key_hash: string; revoked_at: Date }[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId}
    returning id, key_hash, revoked_at`
  return row ? { keyId: row.id, keyHash: row.key_hash, revokedAt: row.revoked_at } : null
}

export interface ActiveApiKey {
  keyId: string
  businessId: string
  scopes: string[]
}

/** The gateway's lookup: hash the presented key with `hashApiKey`, then ask here. */
export async function findActiveKeyByHash(db: Db, keyHash: string): Promise<ActiveApiKey | null> {
  const [row] = await db<{ id: string; business_id: string; scopes: string[] }[]>`
    select id, business_id, scopes from api_keys where key_hash = ${keyHash} and revoked_at is null`
  return row ? { keyId: row.id, businessId: row.business_id, scopes: row.scopes } : null
}
