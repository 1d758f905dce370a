import { fileURLToPath } from 'node:url'
import path from 'node:path'
import postgres from 'postgres'
import shift from 'postgres-shift'
import type { CommonConfig } from '../config.js'
import { createSql } from './sql.js'

// The SQL files are not compiled, so both src and dist resolve them from the project root.
const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), fileURLToPath(import.meta.url).includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..')
export const migrationsDir = path.join(projectRoot, 'shared', 'db', 'migrations')

/** Creates the database named in DATABASE_URL when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl)
  const name = decodeURIComponent(url.pathname.replace(/^\//, '')) || 'postgres'
  url.pathname = '/postgres'
  const admin = postgres(url.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 })
  try {
    const [row] = await admin`select 1 as found from pg_database where datname = ${name}`
    if (!row) {
      try {
        await admin`create database ${admin(name)}`
      } catch (err) {
        // Another process created it between the check and the create: 42P04 once it has, and
        // 23505 (pg_database's unique index) while both creates run at once, as when the
        // suite's first two files start together on a fresh machine.
        if (!(err instanceof postgres.PostgresError && (err.code === '42P04' || err.code === '23505'))) throw err
      }
    }
  } finally {
    await admin.end()
  }
}

/**
 * Brings the configured schema up to date. An advisory lock serialises concurrent starts
 * (several replicas, or `npm start` racing a migration job) because postgres-shift has none.
 */
export async function migrate(config: Pick<CommonConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATABASE_POOL_MAX'>): Promise<void> {
  await ensureDatabase(config.DATABASE_URL)
  const sql = createSql(config, { max: 1 })
  try {
    await sql`select pg_advisory_lock(hashtext(${'courier-migrate:' + config.DATABASE_SCHEMA}))`
    await sql`create schema if not exists ${sql(config.DATABASE_SCHEMA)}`
    await shift({ sql, path: migrationsDir })
  } finally {
    await sql.end()
  }
}
