import { hash } from 'node:crypto'

/**
 * How a secret the server must recognise but never keep is stored: its SHA-256, in hex (API keys,
 * courier tokens, console and courier session ids, set-password links). A read of the database
 * then gives nobody a credential to replay.
 */
export function secretHash(secret: string): string {
  return hash('sha256', secret, 'hex')
}
