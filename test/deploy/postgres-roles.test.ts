import { randomBytes, randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import t from 'tap'
import { migrate } from '../../shared/db/migrate.js'
import { createSql } from '../../shared/db/sql.js'
import { keepPartitions, pruneSettledDeliveries } from '../../shared/orders/history.js'
import { projectRoot } from '../helpers/processes.js'

/*
 * deploy/postgres/roles.sql against the real Postgres, in a database of the test's own: the
 * migrations run as the owner role, and a service's role may read and write rows but is
 * refused any change to the schema. Role names are global to the server, so the test renames
 * them with a suffix of its own and drops them at the end.
 */

const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
/** The login role of each long-running service (deploy/k8s: DATABASE_URL_<SERVICE>). */
const SERVICE_ROLES = ['gateway', 'pricing', 'worker', 'webhook_sender', 'console', 'dispatcher']
const ROLES = ['owner', 'app', ...SERVICE_ROLES]

t.test('services get rows, only the migration owner gets the schema', async (t) => {
  const suffix = randomBytes(4).toString('hex')
  const database = `courier_roles_${suffix}`
  const role = (name: string) => `r${suffix}_${name}`
  const script = readFileSync(path.join(projectRoot, 'deploy/postgres/roles.sql'), 'utf8')
    .replace(new RegExp(`\\bcourier_(${ROLES.join('|')})\\b`, 'g'), (_match, name: string) => role(name))
  // A role left out of ROLES would be created under its real, server-wide name and never dropped.
  if (!t.notMatch(script, /\bcourier_\w+/, 'every role of the script is renamed for the test')) return

  const urlAs = (user: string, db: string) => {
    const url = new URL(ADMIN_URL)
    url.username = user
    url.password = ''
    url.pathname = `/${db}`
    return url.toString()
  }
  const server = postgres(urlAs(new URL(ADMIN_URL).username, 'postgres'), { max: 1, onnotice: () => {} })
  t.teardown(async () => {
    await server`drop database if exists ${server(database)} with (force)`
    for (const name of ROLES) await server`drop role if exists ${server(role(name))}`
    await server.end()
  })
  await server`create database ${server(database)}`

  const admin = postgres(urlAs(new URL(ADMIN_URL).username, database), { max: 1, onnotice: () => {} })
  await admin.unsafe(script).simple()
  await admin.unsafe(script).simple()
  t.pass('roles.sql applies, and applies again unchanged')
  const members = await admin<Array<{ rolname: string }>>`
    select member.rolname from pg_auth_members m
    join pg_roles member on member.oid = m.member
    join pg_roles app on app.oid = m.roleid
    where app.rolname = ${role('app')} and member.rolcanlogin`
  t.same(members.map((row) => row.rolname).sort(), SERVICE_ROLES.map(role).sort(), 'each service logs in as its own member of courier_app')
  await admin.end()

  await migrate({ DATABASE_URL: urlAs(role('owner'), database), DATABASE_SCHEMA: 'public', DATABASE_POOL_MAX: 1 })
  t.pass('the owner role runs every migration (DDL)')

  const gateway = postgres(urlAs(role('gateway'), database), { max: 1, onnotice: () => {} })
  t.teardown(() => gateway.end())
  const id = randomUUID()
  await gateway`insert into rate_cards (id, name, currency) values (${id}, ${'roles-test'}, 'NGN')`
  const [row] = await gateway`select name from rate_cards where id = ${id}`
  t.equal(row?.name, 'roles-test', 'the gateway role inserts and selects')
  await gateway`update rate_cards set name = 'roles-test-2' where id = ${id}`
  await gateway`delete from rate_cards where id = ${id}`
  t.pass('and updates and deletes')

  const refused = async (statement: string, what: string) => {
    const error = await gateway.unsafe(statement).then(() => undefined, (err: unknown) => err as { code?: string; message?: string })
    t.equal(error?.code, '42501', `${what} is refused: ${error?.message ?? 'it ran'}`)
  }
  await refused('create table intruder (id int)', 'CREATE TABLE')
  await refused('drop table rate_cards', 'DROP TABLE')
  await refused('alter table rate_cards add column note text', 'ALTER TABLE')
  await refused('truncate rate_cards', 'TRUNCATE')
  await refused('create schema intruder', 'CREATE SCHEMA')

  // The history's month partitions are DDL (docs/scaling.md): the migrate CLI keeps them as the
  // owner; a worker's role is refused and prunes rows only.
  const retention = { eventRetentionD: 30, trailRetentionD: 90 }
  const sqlAs = (name: string) => createSql({ DATABASE_URL: urlAs(role(name), database), DATABASE_SCHEMA: 'public', DATABASE_POOL_MAX: 1 }, { max: 1 })
  const owner = sqlAs('owner')
  const worker = sqlAs('worker')
  t.teardown(async () => { await owner.end(); await worker.end() })
  const kept = await keepPartitions(owner, retention, new Date(Date.now() + 200 * 86_400_000))
  t.ok(kept.created.some((name) => name.startsWith('events_')), `the owner makes months ahead: ${kept.created.join(', ')}`)
  const refusal = await keepPartitions(worker, retention, new Date(Date.now() + 400 * 86_400_000)).then(() => undefined, (err: unknown) => err as { code?: string })
  t.equal(refusal?.code, '42501', 'a worker\'s role may not make months')
  t.equal(await pruneSettledDeliveries(worker, retention.eventRetentionD), 0, 'but prunes settled deliveries')
})
