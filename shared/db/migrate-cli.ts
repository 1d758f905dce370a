import { commonEnv, loadConfig } from '../config.js'
import { migrate } from './migrate.js'

// The one-shot entrypoint of the migration Job and of the compose `migrate` service.
try {
  const config = loadConfig(commonEnv)
  await migrate(config)
  console.log(JSON.stringify({ migrated: true, schema: config.DATABASE_SCHEMA }))
} catch (err) {
  console.error((err as Error).message)
  process.exitCode = 1
}
