import { randomBytes } from 'node:crypto'
import path from 'node:path'
import { ConfigError, erasureEnv, loadConfig } from '../../../shared/config.js'
import { DEV_SECRETS_DIR, withDevSecret } from '../../../shared/dev-secrets.js'
import { errorCode, errorMessage } from '../../../shared/errors/error-message.js'
import { erasePerson, phoneDigits, phoneFingerprint } from '../../../shared/orders/personal-data.js'
import { createPhotoStore } from '../../../shared/storage/photos.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/** Where a development machine keeps its ERASURE_AUDIT_KEY when none is set. */
const DEV_ERASURE_KEY_FILE = path.join(DEV_SECRETS_DIR, 'erasure-audit-key')

/**
 * The key the audit trail's names of erased people are made with. Outside production an unset
 * one is the machine's development key, made once and kept, so the names stay comparable from one
 * erasure to the next; production must set its own.
 */
function erasureAuditKey(env: NodeJS.ProcessEnv): string {
  const given = withDevelopmentKey(env)
  try {
    return loadConfig(erasureEnv, given).ERASURE_AUDIT_KEY
  } catch (err) {
    if (err instanceof ConfigError) throw new OperatorInputError(err.message)
    throw err
  }
}

/** The environment with the machine's development key when unset; where none can be kept (a container's read-only tree), the setting is asked for. */
function withDevelopmentKey(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  try {
    return withDevSecret(env, 'ERASURE_AUDIT_KEY', DEV_ERASURE_KEY_FILE, () => randomBytes(32).toString('base64'))
  } catch (err) {
    throw new OperatorInputError(`ERASURE_AUDIT_KEY is not set, and no development key can be kept at ${DEV_ERASURE_KEY_FILE} (${errorCode(err) ?? errorMessage(err)}): set ERASURE_AUDIT_KEY (32 characters or more) and keep it for good`)
  }
}

/**
 * `erase --phone …`: one person's right to erasure. Every order whose recipient, alternate or
 * sender phone is that number loses its personal data now, whatever its age; money, statuses and
 * times stay. Refused while one of them is still on its way (the courier needs the address).
 */
export const erase = defineCommand({
  options: {
    phone: { type: 'string' },
  },
  prepare(flags) {
    const typed = requiredText(flags, 'phone')
    const digits = phoneDigits(typed)
    if (!digits) throw new OperatorInputError(`--phone is not a valid phone number: the number as the shipments carry it, 10 to 15 digits, got '${typed}'`)
    return { digits, auditKey: erasureAuditKey(process.env) }
  },
  async run({ sql, config, actor }, { digits, auditKey }) {
    const erasure = await erasePerson(sql, createPhotoStore(config), actor, digits, auditKey)
    if (erasure.kind === 'active') {
      throw new OperatorInputError(`nothing was erased: ${erasure.orderIds.join(', ')} ${erasure.orderIds.length === 1 ? 'is' : 'are'} still on the way; erase once delivered, cancelled, failed or returned`)
    }
    return { phone: phoneFingerprint(digits, auditKey), erased_orders: erasure.orderIds }
  },
})
