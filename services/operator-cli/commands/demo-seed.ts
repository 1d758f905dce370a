import { demoSeed } from '../../../shared/accounts/demo-seed.js'
import { announce } from '../announce.js'
import { defineCommand } from '../command.js'

/** `demo:seed`: no flags. */
export const demoSeedCommand = defineCommand({
  options: {},
  prepare: () => ({}),
  async run({ sql, config, redis }) {
    const connection = await redis()
    return { ...(await demoSeed(sql, (message) => announce(connection, config.QUEUE_PREFIX, message), config)) }
  },
})
