import { describeDifferences, openBusiness } from '../../../shared/accounts/operator-actions.js'
import { defineCommand } from '../command.js'
import { businessProfileSchema } from '../../../shared/schemas/business.js'
import { optionalNumber, optionalText, readByApiRules, requiredText } from '../flags.js'
import { OperatorInputError } from '../operator-input-error.js'

/**
 * `business:create`: a business and its empty wallet, in the deployment's one currency. Safe to
 * run again: the same name (any case) with the same details names the business already opened.
 */
export const businessCreate = defineCommand({
  options: {
    name: { type: 'string' },
    phone: { type: 'string' },
    address: { type: 'string' },
    state: { type: 'string' },
    lat: { type: 'string' },
    lng: { type: 'string' },
    currency: { type: 'string' },
  },
  prepare(flags, config) {
    // The console's rules for a business (a phone that can be called, an address, a state by name), stored alike.
    const profile = readByApiRules(businessProfileSchema, {
      name: requiredText(flags, 'name'),
      phone: requiredText(flags, 'phone', 64),
      address: requiredText(flags, 'address', 500),
      state: requiredText(flags, 'state'),
    })
    const business = {
      ...profile,
      latitude: optionalNumber(flags, 'lat', -90, 90),
      longitude: optionalNumber(flags, 'lng', -180, 180),
      currency: (optionalText(flags, 'currency') ?? config.CURRENCY).toUpperCase(),
    }
    // Half a pickup point is worse than none: the geocoder would be skipped for a wrong spot.
    if ((business.latitude === null) !== (business.longitude === null)) {
      throw new OperatorInputError('--lat and --lng must be given together')
    }
    if (business.currency !== config.CURRENCY) {
      throw new OperatorInputError(`--currency ${business.currency} is not this deployment's currency (${config.CURRENCY})`)
    }
    return business
  },
  async run({ sql, actor }, input) {
    const opening = await openBusiness(sql, actor, input)
    const { business } = opening
    if (opening.kind === 'conflict') {
      throw new OperatorInputError(`a business named '${business.name}' already exists (${business.id}) with ${describeDifferences(opening.differences)}; nothing was created: give its details, or another name for another business`)
    }
    if (opening.kind === 'exists') {
      // A retry: its API keys were shown once, when made, and are not shown again.
      process.stderr.write(`note: business '${business.name}' exists already (${business.id}); nothing was created. A new API key: key:create --business ${business.id}\n`)
    }
    return { business_id: business.id }
  },
})
