import { readdirSync } from 'node:fs'
import path from 'node:path'
import postgres from 'postgres'
import shift from 'postgres-shift'
import type { CommonConfig } from '../config.js'
import { projectRoot } from '../project-root.js'
import { createSql } from './sql.js'

// The SQL files are not compiled, so both src and dist resolve them from the project root.
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

/** The number of the newest migration file (postgres-shift requires them numbered 1, 2, 3… without a gap). */
function latestMigrationId(): number {
  return readdirSync(migrationsDir).filter((name) => /^[0-9]{5}_/.test(name)).length
}

/**
 * Whether the schema already holds every migration, asked with one query; false when the
 * database, the schema or the migrations table is not there yet (the full path says why if
 * Postgres itself is out of reach).
 */
async function upToDate(config: Pick<CommonConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATABASE_POOL_MAX'>): Promise<boolean> {
  const sql = createSql(config, { max: 1 })
  try {
    const [row] = await sql<{ latest: number | null }[]>`select max(migration_id)::int as latest from ${sql(config.DATABASE_SCHEMA)}.migrations`
    return row?.latest === latestMigrationId()
  } catch {
    return false
  } finally {
    await sql.end()
  }
}

/**
 * Brings the configured schema up to date. An advisory lock serialises concurrent starts
 * (several replicas, or `npm start` racing a migration job) because postgres-shift has none.
 * A schema already current costs one query: every CLI command and service start runs this.
 */
export async function migrate(config: Pick<CommonConfig, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATABASE_POOL_MAX'>): Promise<void> {
  if (await upToDate(config)) return
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
