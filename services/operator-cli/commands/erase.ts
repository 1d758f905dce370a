import { erasePerson, phoneDigits, phoneFingerprint } from '../../../shared/orders/personal-data.js'
import { createPhotoStore } from '../../../shared/storage/photos.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

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
    return { digits }
  },
  async run({ sql, config, actor }, { digits }) {
    const erasure = await erasePerson(sql, createPhotoStore(config), actor, digits)
    if (erasure.kind === 'active') {
      throw new OperatorInputError(`nothing was erased: ${erasure.orderIds.join(', ')} ${erasure.orderIds.length === 1 ? 'is' : 'are'} still on the way; erase once delivered, cancelled, failed or returned`)
    }
    return { phone: phoneFingerprint(digits), erased_orders: erasure.orderIds }
  },
})
