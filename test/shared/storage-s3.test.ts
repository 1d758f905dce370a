import { mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t from 'tap'
// s3rver: an S3-compatible server in Node (the S3 REST API over a directory), as MinIO is one in compose.
import S3rver from 's3rver'
import { createPhotoStore, newPhotoKey } from '../../shared/storage/photos.js'
import { JPEG, PNG } from '../helpers/photos.js'

// The photo store's S3 side against a real S3-compatible server: what production (S3_BUCKET) and
// compose (MinIO) run: the bucket is kept private there, and a photo is read through a presigned link.
const dir = mkdtempSync(path.join(tmpdir(), 'courier-s3-'))
const BUCKET = 'courier-photos'
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: BUCKET, configs: [] }] })
const address: AddressInfo = await server.run()
t.teardown(async () => {
  await server.close()
  rmSync(dir, { recursive: true, force: true })
})
const endpoint = `http://127.0.0.1:${address.port}`
// s3rver's fixed development credentials.
const store = createPhotoStore({ STORAGE_DIR: 'unused', S3_BUCKET: BUCKET, S3_ENDPOINT: endpoint, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: true, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' })

t.test('put, get, a presigned link that works without credentials, remove', async (t) => {
  const key = newPhotoKey('ORD-7K2M9QXH4T', 'image/png')
  await store.put(key, { bytes: PNG, contentType: 'image/png' })
  t.same(await store.get(key), { bytes: PNG, contentType: 'image/png' }, 'read back as written')

  const link = await store.presign(key, 900)
  t.ok(link, 'S3 hands out its own links')
  const url = new URL(link!)
  t.equal(url.origin, endpoint)
  t.equal(url.pathname, `/${BUCKET}/${key}`, 'path-style, as MinIO wants')
  t.equal(url.searchParams.get('X-Amz-Expires'), '900', 'valid 15 minutes')
  const fetched = await fetch(url)
  t.equal(fetched.status, 200, 'no credentials needed: the link is the permission')
  t.same(Buffer.from(await fetched.arrayBuffer()), PNG)

  await store.remove(key)
  t.equal(await store.get(key), null, 'gone once removed')
  await store.remove(key)
  t.pass('removing it again is no error')
})

t.test('a link names the store as a browser reaches it (S3_PUBLIC_ENDPOINT), and is signed for that host', async (t) => {
  // Compose: the services reach MinIO as minio:9000, a browser as localhost:9000.
  const outside = `http://localhost:${address.port}`
  const linked = createPhotoStore({ STORAGE_DIR: 'unused', S3_BUCKET: BUCKET, S3_ENDPOINT: endpoint, S3_PUBLIC_ENDPOINT: outside, S3_REGION: 'us-east-1', S3_FORCE_PATH_STYLE: true, S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER' })
  const key = newPhotoKey('ORD-7K2M9QXH4X', 'image/png')
  await linked.put(key, { bytes: PNG, contentType: 'image/png' })
  const url = new URL((await linked.presign(key, 900))!)
  t.equal(url.origin, outside, 'the link names the public endpoint')
  // Sent to the server under the name it was signed for, as the browser's request would be.
  const answer = await new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port: address.port, path: url.pathname + url.search, headers: { host: url.host } }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk)).on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }))
    })
    request.on('error', reject)
  })
  t.equal(answer.status, 200, 'the signature holds for that host')
  t.same(answer.body, PNG)
  await linked.remove(key)
})

t.test('a JPEG keeps its type; an unknown key reads as none', async (t) => {
  const key = newPhotoKey('ORD-7K2M9QXH4V', 'image/jpeg')
  await store.put(key, { bytes: JPEG, contentType: 'image/jpeg' })
  t.match(await store.get(key), { contentType: 'image/jpeg' })
  t.equal(await store.get(newPhotoKey('ORD-7K2M9QXH4W', 'image/png')), null)
})
