import type { ParseArgsConfig } from 'node:util'
import type { RedisClient } from '../../shared/redis.js'
import type { CommonConfig } from '../../shared/config.js'
import type { Sql } from '../../shared/db/sql.js'
import type { Invalidation } from '../../shared/invalidation.js'

/** Every flag of the CLI takes a value, so parsed flags are plain strings. */
export type Flags = Record<string, string | undefined>

export interface OperatorContext {
  sql: Sql
  config: CommonConfig
  /** Who the audit trail names: `cli:<os user>`. */
  actor: string
  /** Connects on first use; null when Redis is out of reach (a warning went to stderr). */
  redis(): Promise<RedisClient | null>
  /** Publishes after a commit; a Redis failure only warns, the change stands. */
  announce(message: Invalidation): Promise<void>
}

/**
 * One operator command. `prepare` checks the flags' form before any connection opens;
 * `run` checks what needs the database and writes in one transaction.
 */
export interface OperatorCommand<Input> {
  options: NonNullable<ParseArgsConfig['options']>
  prepare(flags: Flags, config: CommonConfig): Input
  run(context: OperatorContext, input: Input): Promise<Record<string, unknown>>
}

/** A command as main() holds it: its flags, and its checked flags bound to its run. */
export interface Command {
  options: OperatorCommand<unknown>['options']
  prepare(flags: Flags, config: CommonConfig): (context: OperatorContext) => Promise<Record<string, unknown>>
}

/** Keeps each command's Input type checked while main() holds them in one table. */
export function defineCommand<Input>(command: OperatorCommand<Input>): Command {
  return {
    options: command.options,
    prepare(flags, config) {
      const input = command.prepare(flags, config)
      return (context) => command.run(context, input)
    },
  }
}
