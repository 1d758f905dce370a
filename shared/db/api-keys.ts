import type { Db } from './sql.js'

export const API_KEY_SCOPES = ['orders:write', 'orders:read', 'webhooks:write'] as const
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number]

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value)
}

/** A key as stored: its id, owner, hash and display prefix, never the key itself. */
export interface NewApiKey {
  keyId: string
  businessId: string
  keyHash: string
  displayPrefix: string
  scopes: ApiKeyScope[]
  /** False for a sandbox key (`ck_test_`): everything it creates is test data. */
  livemode: boolean
}

export async function insertApiKey(db: Db, key: NewApiKey): Promise<void> {
  await db`
    insert into api_keys (id, business_id, key_hash, display_prefix, scopes, livemode)
    values (${key.keyId}, ${key.businessId}, ${key.keyHash}, ${key.displayPrefix}, ${key.scopes}, ${key.livemode})`
}

export interface RevokedApiKey {
  keyId: string
  businessId: string
  keyHash: string
  displayPrefix: string
  revokedAt: Date
  /** False when the key had been revoked before: nothing changed. */
  newlyRevoked: boolean
}

/**
 * Revokes a key; revoking it again keeps the first revocation time. Null for an unknown id, or
 * one of another business when `businessId` is given.
 */
export async function revokeApiKey(db: Db, keyId: string, businessId: string | null = null): Promise<RevokedApiKey | null> {
  const [row] = await db<RevokedApiKey[]>`
    update api_keys set revoked_at = coalesce(revoked_at, now())
    where id = ${keyId} ${businessId === null ? db`` : db`and business_id = ${businessId}`}
    returning id as key_id, business_id, key_hash, display_prefix, revoked_at, revoked_at = now() as newly_revoked`
  return row ?? null
}

export interface ListedApiKey {
  keyId: string
  displayPrefix: string
  scopes: ApiKeyScope[]
  livemode: boolean
  createdAt: Date
  revokedAt: Date | null
}

/** A business's keys, newest first: what a key starts with, never the key. */
export async function listApiKeys(db: Db, businessId: string): Promise<ListedApiKey[]> {
  return db<ListedApiKey[]>`
    select id as key_id, display_prefix, scopes, livemode, created_at, revoked_at from api_keys
    where business_id = ${businessId} order by created_at desc, id`
}

export interface ActiveApiKey {
  keyId: string
  businessId: string
  scopes: string[]
  livemode: boolean
}

/** The gateway's lookup: hash the presented key with `hashApiKey`, then ask here. */
export async function findActiveKeyByHash(db: Db, keyHash: string): Promise<ActiveApiKey | null> {
  const [row] = await db<ActiveApiKey[]>`
    select id as key_id, business_id, scopes, livemode from api_keys where key_hash = ${keyHash} and revoked_at is null`
  return row ?? null
}
