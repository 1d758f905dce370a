import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'

// scrypt at N=2^15, r=8, p=1 (DESIGN 12): about 32 MiB a hash, so maxmem is raised to 64 MiB (13.15).
const PARAMS = { N: 2 ** 15, r: 8, p: 1 }
const KEY_LENGTH = 32
export const MIN_PASSWORD_LENGTH = 12

function derive(password: string, salt: Buffer, params: typeof PARAMS): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 64 * 1024 * 1024 }
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)))
  })
}

/** `scrypt$N$r$p$salt$hash`: the parameters travel with the hash, so they can be raised later. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16)
  const key = await derive(password, salt, PARAMS)
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join('$')
}

/** False for a wrong password or a malformed hash; `null` (no password set) costs a hash too, so timing tells nothing. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = (stored ?? '').split('$')
  if (scheme !== 'scrypt' || !salt || !key) {
    await derive(password, randomBytes(16), PARAMS)
    return false
  }
  const expected = Buffer.from(key, 'base64url')
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) })
  return actual.length === expected.length && timingSafeEqual(actual, expected)
}
