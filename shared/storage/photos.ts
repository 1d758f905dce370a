import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { CommonConfig } from '../config.js'

// Proof-of-delivery photos (DESIGN 14): one small interface, a local directory by default and any
// S3-compatible store (AWS S3, MinIO, R2…) when S3_BUCKET is set. Photos are personal data:
// erased with the order's other personal fields (docs/contracts.md section 8).

/** The largest photo a delivery may carry (DESIGN 14). */
export const PHOTO_MAX_BYTES = 5 * 1024 * 1024

export type PhotoType = 'image/jpeg' | 'image/png'

export interface StoredPhoto {
  bytes: Buffer
  contentType: PhotoType
}

export interface PhotoStore {
  put(key: string, photo: StoredPhoto): Promise<void>
  get(key: string): Promise<StoredPhoto | null>
  remove(key: string): Promise<void>
  /** A link valid `ttlS` seconds the store serves itself (S3: a presigned GET); null: the gateway serves it (local directory). */
  presign(key: string, ttlS: number): Promise<string | null>
}

/** JPEG or PNG by its first bytes, whatever the client said it was; null: neither. */
export function photoTypeOf(bytes: Buffer): PhotoType | null {
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (bytes.length >= png.length && png.every((byte, i) => bytes[i] === byte)) return 'image/png'
  return null
}

/** Where a new photo of `orderId` goes: unguessable, and never reused by a second delivery attempt. */
export function newPhotoKey(orderId: string, type: PhotoType): string {
  return `proof/${orderId}/${randomBytes(12).toString('hex')}.${type === 'image/png' ? 'png' : 'jpg'}`
}

const KEY = /^proof\/ORD-[A-Za-z0-9_-]+\/[0-9a-f]{24}\.(jpg|png)$/

type StorageConfig = Pick<CommonConfig, 'STORAGE_DIR' | 'S3_BUCKET' | 'S3_ENDPOINT' | 'S3_PUBLIC_ENDPOINT' | 'S3_REGION' | 'S3_FORCE_PATH_STYLE' | 'S3_ACCESS_KEY_ID' | 'S3_SECRET_ACCESS_KEY'>

export function createPhotoStore(config: StorageConfig): PhotoStore {
  return config.S3_BUCKET ? s3Store(config.S3_BUCKET, config) : directoryStore(path.resolve(config.STORAGE_DIR))
}

function directoryStore(root: string): PhotoStore {
  const file = (key: string) => {
    if (!KEY.test(key)) throw new Error(`not a photo key: ${key}`)
    return path.join(root, key)
  }
  return {
    async put(key, photo) {
      await mkdir(path.dirname(file(key)), { recursive: true })
      await writeFile(file(key), photo.bytes, { mode: 0o600 })
    },
    async get(key) {
      const bytes = await readFile(file(key)).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return null
        throw err
      })
      const type = bytes && photoTypeOf(bytes)
      return bytes && type ? { bytes, contentType: type } : null
    },
    async remove(key) {
      await rm(file(key), { force: true })
    },
    presign: async () => null,
  }
}

/**
 * The AWS SDK, loaded on first use: a deployment that keeps photos in a directory never loads it,
 * and one that uses S3 loads it once (it adds megabytes to every process that imports it).
 */
async function loadSdk() {
  const [s3, presigner] = await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/s3-request-presigner')])
  return { ...s3, getSignedUrl: presigner.getSignedUrl }
}

function s3Store(bucket: string, config: StorageConfig): PhotoStore {
  const credentials = config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY ? { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY } : undefined
  let ready: ReturnType<typeof connect> | null = null
  async function connect() {
    const sdk = await loadSdk()
    const client = (endpoint: string | undefined) => new sdk.S3Client({ region: config.S3_REGION, endpoint, forcePathStyle: config.S3_FORCE_PATH_STYLE, credentials })
    const inside = client(config.S3_ENDPOINT)
    // A link is signed for the host it names: the one a browser reaches, where that differs.
    return { sdk, client: inside, linkClient: config.S3_PUBLIC_ENDPOINT ? client(config.S3_PUBLIC_ENDPOINT) : inside }
  }
  const s3 = () => (ready ??= connect())
  return {
    async put(key, photo) {
      const { sdk, client } = await s3()
      await client.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: photo.bytes, ContentType: photo.contentType }))
    },
    async get(key) {
      const { sdk, client } = await s3()
      try {
        const object = await client.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: key }))
        const bytes = object.Body ? Buffer.from(await object.Body.transformToByteArray()) : null
        const type = bytes && photoTypeOf(bytes)
        return bytes && type ? { bytes, contentType: type } : null
      } catch (err) {
        if (err instanceof Error && err.name === 'NoSuchKey') return null
        throw err
      }
    },
    async remove(key) {
      const { sdk, client } = await s3()
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: key }))
    },
    async presign(key, ttlS) {
      const { sdk, linkClient } = await s3()
      return sdk.getSignedUrl(linkClient, new sdk.GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: ttlS })
    },
  }
}

/**
 * The gateway's own short-lived photo links (a local directory has no presigned URLs): the key
 * and an expiry, signed with HMAC-SHA256, so the link works in a browser without the API key
 * until it expires, and no other key can be reached with it.
 */
export function photoLinks(secret: Buffer) {
  // The key serves other purposes too (webhook secrets): the signed text says what it is for.
  const sign = (payload: string) => createHmac('sha256', secret).update(`proof-photo-link\0${payload}`).digest('base64url')
  return {
    /** The link's path below `/v2/proof-photos/`: three segments (a path parameter holds at most 100 characters). */
    path(key: string, expiresAt: number): string {
      const payload = `${Buffer.from(key).toString('base64url')}/${expiresAt}`
      return `${payload}/${sign(payload)}`
    },
    /** The key a link names, or why it names none. */
    read(parts: { key: string; expires: string; signature: string }, now: number): { kind: 'valid'; key: string } | { kind: 'expired' } | { kind: 'invalid' } {
      if (!/^\d{1,12}$/.test(parts.expires)) return { kind: 'invalid' }
      const expected = Buffer.from(sign(`${parts.key}/${parts.expires}`))
      const given = Buffer.from(parts.signature)
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { kind: 'invalid' }
      if (Number(parts.expires) * 1000 <= now) return { kind: 'expired' }
      return { kind: 'valid', key: Buffer.from(parts.key, 'base64url').toString() }
    },
  }
}
