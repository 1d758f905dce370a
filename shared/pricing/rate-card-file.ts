import { insertRateCardVersion, type ImportedRateCard } from '../db/rate-cards.js'
import type { Db } from '../db/sql.js'
import { RateCardFileError } from '../errors/rate-card-file-error.js'
import { ringProblem } from '../geo/ring.js'
import { newOptionId, newUuid } from '../ids.js'
import { hasAtMostTwoDecimals } from '../money.js'
import { rateCardFileSchema, type RateCardFile, type RateCardFileOption } from '../schemas/rate-card.js'

/**
 * Imports a rate-card file, the one step every path shares (the CLI, the demo seed, tests):
 * checks it, then writes it as the card's next version. Throws `RateCardFileError` (nothing
 * written) when the file is wrong.
 */
export async function importRateCard(db: Db, file: unknown, currency: string): Promise<ImportedRateCard> {
  const card = checkRateCardFile(file, currency)
  return insertRateCardVersion(db, card, { rateCardId: newUuid(), versionId: newUuid(), optionIds: card.options.map(() => newOptionId()) })
}

/**
 * Checks a rate-card file before anything is written: its shape, then the rules that tie its
 * parts together. Throws `RateCardFileError` naming the first thing to fix.
 */
export function checkRateCardFile(file: unknown, currency: string): RateCardFile {
  const parsed = rateCardFileSchema.safeParse(file)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const where = issue.path.map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index ? '.' : ''}${String(part)}`)).join('')
    throw new RateCardFileError(where ? `${where}: ${issue.message}` : issue.message)
  }
  const card = parsed.data
  if (card.currency !== currency) throw new RateCardFileError(`currency ${card.currency} does not match this deployment's currency ${currency}`)
  checkZones(card)
  checkLabels(card)
  card.options.forEach((option, index) => checkOption(option, index, card))
  checkBikeBands(card.options)
  return card
}

function checkZones(card: RateCardFile): void {
  const seen = new Set<string>()
  card.zones.forEach((zone, index) => {
    if (seen.has(zone.name)) throw new RateCardFileError(`zones[${index}].name: zone ${zone.name} is listed twice`)
    seen.add(zone.name)
    const problem = ringProblem(zone.polygon)
    if (problem) throw new RateCardFileError(`zones[${index}].polygon (${zone.name}): ${problem}`)
  })
}

// Error messages name an option by its label, so a label must point at one option.
function checkLabels(card: RateCardFile): void {
  const seen = new Set<string>()
  card.options.forEach((option, index) => {
    if (seen.has(option.label)) throw new RateCardFileError(`options[${index}].label: label ${option.label} is used by two options`)
    seen.add(option.label)
  })
}

function checkOption(option: RateCardFileOption, index: number, card: RateCardFile): void {
  const where = `options[${index}] (${option.label})`
  if (option.min_weight_kg !== undefined && option.min_weight_kg >= option.max_weight_kg) {
    throw new RateCardFileError(`${where}: min_weight_kg must be below max_weight_kg`)
  }
  const zoneNames = new Set(card.zones.map((zone) => zone.name))
  const pairs = new Set<string>()
  option.prices.forEach((price, priceIndex) => {
    const at = `${where}.prices[${priceIndex}]`
    for (const end of ['from', 'to'] as const) {
      if (!zoneNames.has(price[end])) throw new RateCardFileError(`${at}.${end}: unknown zone ${price[end]}`)
    }
    if (!hasAtMostTwoDecimals(price.price)) throw new RateCardFileError(`${at}.price: ${price.price} has more than 2 decimals`)
    const pair = `${price.from}\u0000${price.to}`
    if (pairs.has(pair)) throw new RateCardFileError(`${at}: a price from ${price.from} to ${price.to} is listed twice`)
    pairs.add(pair)
  })
}

/** Bike bands must tile the weights they cover: each band starts where the previous one ends. */
function checkBikeBands(options: RateCardFileOption[]): void {
  const bands = options.filter((option) => option.vehicle_type === 'bike').sort((a, b) => (a.min_weight_kg ?? 0) - (b.min_weight_kg ?? 0))
  for (let i = 1; i < bands.length; i++) {
    const previous = bands[i - 1]
    const band = bands[i]
    const min = band.min_weight_kg ?? 0
    if (min < previous.max_weight_kg) throw new RateCardFileError(`bike bands ${previous.label} and ${band.label} overlap: ${band.label} starts at ${min} kg, before ${previous.max_weight_kg} kg`)
    if (min > previous.max_weight_kg) throw new RateCardFileError(`bike bands ${previous.label} and ${band.label} leave a gap from ${previous.max_weight_kg} kg to ${min} kg`)
  }
}
