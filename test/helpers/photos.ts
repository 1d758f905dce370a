import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { createPhotoStore, type PhotoStore } from '../../shared/storage/photos.js'

/** A photo store in a directory of its own, removed when the test ends. */
export function usePhotoStore(t: Test): { dir: string; store: PhotoStore; env: { STORAGE_DIR: string }; files(): string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), 'courier-photos-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return {
    dir,
    store: createPhotoStore({ STORAGE_DIR: dir, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: false }),
    env: { STORAGE_DIR: dir },
    /** Every photo in the store, as keys. */
    files: () => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name))).sort(),
  }
}

/** The smallest valid PNG (1×1), and a JPEG's first bytes with padding: what the magic-byte check accepts. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60, 1), Buffer.from([0xff, 0xd9])])

/** A multipart/form-data body: text fields, then files. */
export function multipart(fields: Record<string, string>, files: { field: string; name: string; type: string; bytes: Buffer }[] = []): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----courier${Math.random().toString(16).slice(2)}`
  const parts: Buffer[] = []
  for (const [name, value] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`))
  for (const file of files) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${file.field}"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n`), file.bytes, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}
