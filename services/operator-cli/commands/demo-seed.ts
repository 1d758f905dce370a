import { demoSeed } from '../../../shared/accounts/demo-seed.js'
import { announce } from '../announce.js'
import { demoConsoleUsers } from '../../../shared/console/users.js'
import { defineCommand } from '../command.js'

/** `demo:seed`: no flags. */
export const demoSeedCommand = defineCommand({
  options: {},
  prepare: () => ({}),
  async run({ sql, config, redis }) {
    const connection = await redis()
    const demo = await demoSeed(sql, (message) => announce(connection, config.QUEUE_PREFIX, message), config)
    const consoleUsers = await demoConsoleUsers(sql, demo.business_id, config.CONSOLE_PUBLIC_URL)
    return { ...demo, console_users: consoleUsers.map((user) => ({ email: user.email, role: user.role, set_password_url: user.link })) }
  },
})
