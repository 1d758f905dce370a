import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { SecretKey } from '../config.js'

/**
 * Webhook signing secrets at rest: AES-256-GCM under a key from the environment
 * (`WEBHOOK_SECRET_KEYS`, a list of `id:base64key`). The first key seals; every key opens, so
 * the key is rotated by putting a new one first, running `npm run admin -- webhooks:reencrypt`,
 * then dropping the old one. A stored value reads `v1.<key id>.<nonce>.<ciphertext>.<tag>`;
 * a database dump alone signs nothing.
 */
export interface SecretBox {
  seal(secret: string): string
  /** The secret of a stored value; a `whsec_` value stored before encryption is returned as it is. */
  open(stored: string): string
  /** Whether a stored value is sealed under the first key already. */
  isCurrent(stored: string): boolean
}

/** A stored value no key of the ring opens: a key was dropped before `webhooks:reencrypt` ran. */
export class SecretKeyMissingError extends Error {
  override name = 'SecretKeyMissingError'
}

export function createSecretBox(keys: SecretKey[]): SecretBox {
  const [current] = keys
  if (!current) throw new SecretKeyMissingError('WEBHOOK_SECRET_KEYS has no key')
  return {
    seal(secret) {
      const nonce = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', current.key, nonce)
      cipher.setAAD(Buffer.from(current.id))
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
      return ['v1', current.id, nonce.toString('base64url'), sealed.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.')
    },
    open(stored) {
      if (stored.startsWith('whsec_')) return stored
      const [version, id, nonce, sealed, tag] = stored.split('.')
      const key = keys.find((candidate) => candidate.id === id)
      if (version !== 'v1' || !key || nonce === undefined || sealed === undefined || tag === undefined) throw new SecretKeyMissingError(`no key "${id}" in WEBHOOK_SECRET_KEYS opens this webhook secret`)
      const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(nonce, 'base64url'))
      decipher.setAAD(Buffer.from(key.id))
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8')
    },
    isCurrent(stored) {
      return stored.startsWith(`v1.${current.id}.`)
    },
  }
}

/**
 * A box that keeps what it opened, up to `max` values (least recently used out first): the
 * sender opens the same endpoint's secret for every delivery. A stored value is sealed under a
 * fresh nonce each time, so a rotated secret is a value never seen before, never a stale hit.
 */
export function keepingOpened(box: SecretBox, max: number): SecretBox {
  const opened = new LRUCache<string, string>({ max, memoMethod: (stored) => box.open(stored) })
  return {
    seal: (secret) => box.seal(secret),
    open: (stored) => opened.memo(stored),
    isCurrent: (stored) => box.isCurrent(stored),
  }
}
