import { migrateEnv, loadConfig } from '../config.js'
import { keepPartitions } from '../orders/history.js'
import { migrate } from './migrate.js'
import { createSql } from './sql.js'
import { errorMessage } from '../errors/error-message.js'

// The one-shot entrypoint of the migration Job, its daily CronJob and the compose `migrate`
// service: migrates, then keeps the history's month partitions (made ahead, dropped past
// retention), the DDL that services' roles may not do (docs/scaling.md).
try {
  const config = loadConfig(migrateEnv)
  await migrate(config)
  const sql = createSql(config, { max: 1 })
  const partitions = await keepPartitions(sql, { eventRetentionD: config.EVENT_RETENTION_D, trailRetentionD: config.PERSONAL_DATA_RETENTION_D })
    .finally(() => sql.end())
  console.log(JSON.stringify({ migrated: true, schema: config.DATABASE_SCHEMA, partitions: { created: partitions.created, dropped: partitions.dropped } }))
} catch (err) {
  console.error(errorMessage(err))
  process.exitCode = 1
}
