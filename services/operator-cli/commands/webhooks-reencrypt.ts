import { ConfigError, loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import { listEndpointSecrets, replaceEndpointSecrets } from '../../../shared/db/webhooks.js'
import { createSecretBox } from '../../../shared/webhooks/secret-box.js'
import { defineCommand } from '../command.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `webhooks:reencrypt`: seals every stored webhook secret under the first key of
 * WEBHOOK_SECRET_KEYS (and any stored before encryption), so the older keys can be dropped.
 * Safe to run again and beside live services: a row rotated meanwhile is left to its rotation.
 */
export const webhooksReencrypt = defineCommand({
  options: {},
  prepare() {
    try {
      return { keys: loadConfig(webhookKeysEnv).WEBHOOK_SECRET_KEYS }
    } catch (err) {
      if (err instanceof ConfigError) throw new OperatorInputError(err.message)
      throw err
    }
  },
  async run({ sql }, { keys }) {
    const box = createSecretBox(keys)
    let resealed = 0
    let current = 0
    for (const stored of await listEndpointSecrets(sql)) {
      if (box.isCurrent(stored.secret) && (stored.previousSecret === null || box.isCurrent(stored.previousSecret))) {
        current += 1
        continue
      }
      const next = { secret: box.seal(box.open(stored.secret)), previousSecret: stored.previousSecret && box.seal(box.open(stored.previousSecret)) }
      if (await replaceEndpointSecrets(sql, stored, next)) resealed += 1
    }
    return { key_id: keys[0]?.id ?? null, resealed, already_current: current }
  },
})
