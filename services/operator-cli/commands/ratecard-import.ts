import { readFileSync } from 'node:fs'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import { defineCommand } from '../command.js'
import { requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'
import { errorMessage } from '../../../shared/errors/error-message.js'

/**
 * `ratecard:import`: a known card name becomes its next version with new option ids, and
 * every business that has the card enabled prices with it at once.
 */
export const ratecardImport = defineCommand({
  options: {
    file: { type: 'string' },
  },
  prepare(flags) {
    const path = requiredText(flags, 'file', 4096)
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (err) {
      throw new OperatorInputError(`cannot read ${path}: ${errorMessage(err)}`)
    }
    try {
      return { path, card: JSON.parse(text) as unknown }
    } catch (err) {
      throw new OperatorInputError(`${path} is not valid JSON: ${errorMessage(err)}`)
    }
  },
  async run({ sql, config, announce, actor }, input) {
    let imported
    try {
      imported = await importRateCardAs(sql, actor, input.card, config.CURRENCY)
    } catch (err) {
      if (err instanceof RateCardFileError) throw new OperatorInputError(`${input.path}: ${err.message}`)
      throw err
    }
    await announce({ kind: 'rate-card', rateCardId: imported.rate_card_id })
    return {
      rate_card_id: imported.rate_card_id,
      version: imported.version,
      options: imported.options.map((option) => ({ id: option.id, vehicle_type: option.vehicle_type, label: option.label })),
    }
  },
})
