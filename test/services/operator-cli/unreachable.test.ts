import { createServer, type Socket } from 'node:net'
import t from 'tap'
import { withDeadline } from '../../../shared/deadline.js'
import { runOperatorCli } from '../../helpers/operator-cli.js'
import { freePort, startSilentServer } from '../../helpers/processes.js'
import { seedAccount } from '../../helpers/accounts.js'
import { seedOrder } from '../../helpers/console.js'
import { useTestDb } from '../../helpers/db.js'

// A DATABASE_URL at a port that accepts the connection and never answers (a frozen server, a
// Redis or some other listener): the CLI gives up within its connect timeout and says where in
// one line, never who.

t.test('a database that accepts and never answers: exit 1, one line naming host:port/db, no credentials', async (t) => {
  const silent = await startSilentServer(t)
  const { port } = new URL(silent.url)
  const env = { DATABASE_URL: `postgres://operator:s3cret-pass@127.0.0.1:${port}/courier_silent`, REDIS_URL: 'redis://127.0.0.1:1' }
  const run = await withDeadline(runOperatorCli({ env }, ['wallet:show', '--business', '00000000-0000-4000-8000-000000000000']), 60_000)
  t.ok(silent.connections() > 0, 'the CLI did reach the listener')
  t.equal(run.code, 1)
  t.equal(run.stdout, '')
  t.match(run.stderr, new RegExp(`^database unreachable at 127\\.0\\.0\\.1:${port}/courier_silent: .*CONNECT_TIMEOUT.*\\n$`))
  t.notMatch(run.stderr, /s3cret|operator/, 'no credentials')
})

t.test('a DATABASE_URL without a port is named at PGPORT, the port the driver dials', async (t) => {
  const silent = await startSilentServer(t)
  const { port } = new URL(silent.url)
  const env = { DATABASE_URL: 'postgres://operator:s3cret-pass@127.0.0.1/courier_pgport', PGPORT: port, REDIS_URL: 'redis://127.0.0.1:1' }
  const run = await withDeadline(runOperatorCli({ env }, ['wallet:show', '--business', '00000000-0000-4000-8000-000000000000']), 60_000)
  t.ok(silent.connections() > 0, 'the driver dialled PGPORT')
  t.equal(run.code, 1)
  t.match(run.stderr, new RegExp(`^database unreachable at 127\\.0\\.0\\.1:${port}/courier_pgport: `))
})

t.test('a database that agrees to TLS and then never answers is named too (the TLS socket names no port)', async (t) => {
  // Says yes to the SSLRequest ('S'), then nothing: the TLS handshake waits for ever.
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.once('data', () => socket.write('S'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => {
    for (const socket of sockets) socket.destroy()
    server.close(resolve)
  }))
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : 0
  const env = { DATABASE_URL: `postgres://operator:s3cret-pass@127.0.0.1:${port}/courier_tls?sslmode=require`, REDIS_URL: 'redis://127.0.0.1:1' }
  const run = await withDeadline(runOperatorCli({ env }, ['wallet:show', '--business', '00000000-0000-4000-8000-000000000000']), 60_000)
  t.equal(run.code, 1)
  t.match(run.stderr, new RegExp(`^database unreachable at 127\\.0\\.0\\.1:${port}/courier_tls: .*CONNECT_TIMEOUT.*\\n$`))
})

t.test('a photo store out of reach during erase is named as what it is, not as the database', async (t) => {
  const db = await useTestDb(t)
  const account = await seedAccount(db.sql, { balance: 1000 })
  const orderId = await seedOrder(db.sql, account.businessId)
  const phone = '+2348055501234'
  await db.sql`update orders set status = 'delivered', photo_key = ${`proof/${orderId}/door.png`}, shipment = shipment || ${db.sql.json({ recipient_phone: phone })} where id = ${orderId}`
  const closed = await freePort()
  const env = { S3_BUCKET: 'proof', S3_ENDPOINT: `http://127.0.0.1:${closed}`, S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: 'test', S3_SECRET_ACCESS_KEY: 'test-secret', ERASURE_AUDIT_KEY: 'the erasure audit key of this test, 32+' }
  const run = await withDeadline(runOperatorCli(db, ['erase', '--phone', phone], env), 60_000)
  t.equal(run.code, 1, 'the photo could not be removed: nothing is erased, to be retried')
  t.notMatch(run.stderr, /database unreachable/, 'the database answered all along')
  t.match(run.stderr, String(closed), 'the error names the store\'s address')
  t.equal((await db.sql`select photo_key from orders where id = ${orderId}`)[0]?.photoKey, `proof/${orderId}/door.png`, 'the erasure rolled back')
})
