import { randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import { commonEnv, loadConfig, type CommonConfig } from '../../shared/config.js'
import { migrate } from '../../shared/db/migrate.js'
import { createSql, type Sql } from '../../shared/db/sql.js'

export interface TestDb {
  config: CommonConfig
  sql: Sql
  /** The environment a child process needs to use the same schema and queue prefix. */
  env: Record<string, string>
}

/**
 * Gives a test file its own migrated schema and its own queue prefix, dropped when the file
 * ends, so files run in parallel and dev data is never touched.
 */
export async function useTestDb(t: Test): Promise<TestDb> {
  const suffix = randomBytes(5).toString('hex')
  const env = {
    DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test',
    DATABASE_SCHEMA: `t_${suffix}`,
    QUEUE_PREFIX: `{courier-test-${suffix}}`,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'silent',
    NODE_ENV: 'test',
  }
  const config = loadConfig(commonEnv, env)
  await migrate(config)
  const sql = createSql(config, { max: 4 })
  t.teardown(async () => {
    await sql`drop schema if exists ${sql(config.DATABASE_SCHEMA)} cascade`
    await sql.end()
  })
  return { config, sql, env }
}
