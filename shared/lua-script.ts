import { createHash } from 'node:crypto'
import type { RedisClient } from './redis.js'

// Apart from redis.ts, which loads ioredis to open connections: a module that only runs scripts
// on a client it is given (the couriers' positions, through the order state machine and so the
// CLI) does not load it.

/**
 * A Lua script run by its SHA-1 (EVALSHA), loaded on first use and again after a Redis restart
 * (NOSCRIPT): a hot path sends 40 bytes instead of the script on every call.
 */
export function luaScript(source: string) {
  const sha = createHash('sha1').update(source).digest('hex')
  // No async function: a ping (the hottest caller) makes one promise here, not two.
  return (redis: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> =>
    redis.evalsha(sha, keys.length, ...keys, ...args).catch((err: unknown) => {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err
      return redis.eval(source, keys.length, ...keys, ...args)
    })
}
