import path from 'node:path'
import { ConfigError, loadConfig, webhookKeysEnv } from '../../../shared/config.js'
import { listEndpointSecrets, replaceEndpointSecrets } from '../../../shared/db/webhooks.js'
import { DEV_KEY_RING_FILE, withDevWebhookSecretKeys } from '../../../shared/webhooks/dev-key-ring.js'
import { createSecretBox } from '../../../shared/webhooks/secret-box.js'
import { defineCommand } from '../command.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `webhooks:reencrypt`: seals every stored webhook secret under the first key of
 * WEBHOOK_SECRET_KEYS (and any stored before encryption), so the older keys can be dropped; outside
 * production, with WEBHOOK_SECRET_KEYS unset, the ring `npm start` keeps in `.dev-secrets/`.
 * Safe to run again and beside live services: a row rotated meanwhile is left to its rotation.
 */
export const webhooksReencrypt = defineCommand({
  options: {},
  prepare() {
    // Outside production an unset ring is `npm start`'s, so the command opens what its services sealed.
    const env = withDevWebhookSecretKeys(process.env)
    try {
      return { keys: loadConfig(webhookKeysEnv, env).WEBHOOK_SECRET_KEYS }
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err
      const hint = env.WEBHOOK_SECRET_KEYS ? '' : `; the services' ring, as under npm start: export WEBHOOK_SECRET_KEYS="$(cat ${path.relative(process.cwd(), DEV_KEY_RING_FILE)})"`
      throw new OperatorInputError(`${err.message}${hint}`)
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
