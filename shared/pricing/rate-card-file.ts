import { insertRateCardVersion, type ImportedRateCard } from '../db/rate-cards.js'
import type { Db } from '../db/sql.js'
import { RateCardFileError, type RateCardProblem } from '../errors/rate-card-file-error.js'
import { ringProblem } from '../geo/ring.js'
import { newOptionId, newUuid } from '../ids.js'
import { pathOf } from '../json-source.js'
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
 * parts together. Throws `RateCardFileError` listing every problem, each at its path (the
 * message names the first).
 */
export function checkRateCardFile(file: unknown, currency: string): RateCardFile {
  const problems: RateCardProblem[] = []
  const report: Report = (path, message) => problems.push({ path, message })
  const parsed = rateCardFileSchema.safeParse(file)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const where = pathOf(issue.path)
      report(where, where ? `${where}: ${issue.message}` : issue.message)
    }
    throw new RateCardFileError(problems)
  }
  const card = parsed.data
  if (card.currency !== currency) report('currency', `currency ${card.currency} does not match this deployment's currency ${currency}`)
  checkZones(card, report)
  checkLabels(card, report)
  card.options.forEach((option, index) => checkOption(option, index, card, report))
  checkBikeBands(card.options, report)
  if (problems.length > 0) throw new RateCardFileError(problems)
  return card
}

/** `path` locates the problem in the file; `message` says it in full, naming the part. */
type Report = (path: string, message: string) => void

function checkZones(card: RateCardFile, report: Report): void {
  const seen = new Set<string>()
  card.zones.forEach((zone, index) => {
    if (seen.has(zone.name)) report(`zones[${index}].name`, `zones[${index}].name: zone ${zone.name} is listed twice`)
    seen.add(zone.name)
    const problem = ringProblem(zone.polygon)
    if (problem) report(`zones[${index}].polygon`, `zones[${index}].polygon (${zone.name}): ${problem}`)
  })
}

// Error messages name an option by its label, so a label must point at one option.
function checkLabels(card: RateCardFile, report: Report): void {
  const seen = new Set<string>()
  card.options.forEach((option, index) => {
    if (seen.has(option.label)) report(`options[${index}].label`, `options[${index}].label: label ${option.label} is used by two options`)
    seen.add(option.label)
  })
}

function checkOption(option: RateCardFileOption, index: number, card: RateCardFile, report: Report): void {
  const path = `options[${index}]`
  const where = `${path} (${option.label})`
  if (option.min_weight_kg !== undefined && option.min_weight_kg >= option.max_weight_kg) {
    report(`${path}.min_weight_kg`, `${where}: min_weight_kg must be below max_weight_kg`)
  }
  const zoneNames = new Set(card.zones.map((zone) => zone.name))
  const pairs = new Set<string>()
  option.prices.forEach((price, priceIndex) => {
    const at = `${path}.prices[${priceIndex}]`
    const said = `${where}.prices[${priceIndex}]`
    for (const end of ['from', 'to'] as const) {
      if (!zoneNames.has(price[end])) report(`${at}.${end}`, `${said}.${end}: unknown zone ${price[end]}`)
    }
    if (!hasAtMostTwoDecimals(price.price)) report(`${at}.price`, `${said}.price: ${price.price} has more than 2 decimals`)
    const pair = `${price.from}\u0000${price.to}`
    if (pairs.has(pair)) report(at, `${said}: a price from ${price.from} to ${price.to} is listed twice`)
    pairs.add(pair)
  })
}

/** Bike bands must tile the weights they cover: each band starts where the previous one ends. */
function checkBikeBands(options: RateCardFileOption[], report: Report): void {
  const bands = options.map((option, index) => ({ option, index })).filter(({ option }) => option.vehicle_type === 'bike').sort((a, b) => (a.option.min_weight_kg ?? 0) - (b.option.min_weight_kg ?? 0))
  for (let i = 1; i < bands.length; i++) {
    const previous = bands[i - 1].option
    const band = bands[i].option
    const min = band.min_weight_kg ?? 0
    const at = `options[${bands[i].index}].min_weight_kg`
    if (min < previous.max_weight_kg) report(at, `bike bands ${previous.label} and ${band.label} overlap: ${band.label} starts at ${min} kg, before ${previous.max_weight_kg} kg`)
    if (min > previous.max_weight_kg) report(at, `bike bands ${previous.label} and ${band.label} leave a gap from ${previous.max_weight_kg} kg to ${min} kg`)
  }
}
