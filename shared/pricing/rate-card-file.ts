import { z } from 'zod'
import { insertRateCardVersion, type ImportedRateCard } from '../db/rate-cards.js'
import type { Db } from '../db/sql.js'
import { errorMessage } from '../errors/error-message.js'
import { MAX_LISTED_PROBLEMS, RateCardFileError, type RateCardProblem } from '../errors/rate-card-file-error.js'
import { ringProblem } from '../geo/ring.js'
import { newOptionId, newUuid } from '../ids.js'
import { jsonSyntaxError, locatePaths, pathOf, type SourcePosition } from '../json-source.js'
import { hasAtMostTwoDecimals, MAX_AMOUNT_MAJOR } from '../money.js'
import { rateCardFileSchema, type RateCardFile, type RateCardFileOption } from '../schemas/rate-card.js'

/** The largest rate-card file an operator may upload (the console's form, `ratecard:import`): 2 MiB. */
export const RATE_CARD_FILE_MAX_BYTES = 2 * 1024 * 1024

/**
 * Imports a rate-card file given as a value (the demo seed, tests): checks it, then writes it as
 * the card's next version. Throws `RateCardFileError` (nothing written) when the file is wrong.
 */
export async function importRateCard(db: Db, file: unknown, currency: string): Promise<ImportedRateCard> {
  return writeRateCard(db, checkRateCardFile(file, currency))
}

/** Writes a card that `checkRateCardFile` or `readRateCardFile` passed as its next version, with new option ids. */
export function writeRateCard(db: Db, card: RateCardFile): Promise<ImportedRateCard> {
  return insertRateCardVersion(db, card, { rateCardId: newUuid(), versionId: newUuid(), optionIds: card.options.map(() => newOptionId()) })
}

/**
 * Reads a rate-card file as the operator uploaded it (the console, `ratecard:import`): parses
 * and checks it. Throws `RateCardFileError` when it is not JSON (one problem, where the syntax
 * breaks) or not a valid card (its problems, each at its line and column in `text`).
 */
export function readRateCardFile(uploaded: string, currency: string): RateCardFile {
  // A byte-order mark (Windows Notepad saves UTF-8 with one) is no part of the JSON, and no
  // editor counts it as a column: dropped, the lines and columns are those the operator sees.
  const text = uploaded.charCodeAt(0) === 0xfeff ? uploaded.slice(1) : uploaded
  let file: unknown
  try {
    file = JSON.parse(text)
  } catch (err) {
    const syntax = jsonSyntaxError(text)
    throw new RateCardFileError([{ path: '', message: `not valid JSON: ${syntax?.message ?? errorMessage(err)}`, at: syntax?.at ?? null }], 0)
  }
  return passed(file, currency, (paths) => locatePaths(text, paths))
}

/**
 * Checks a rate-card file before anything is written: its shape, then the rules that tie its
 * parts together. Throws `RateCardFileError` listing its problems, each at its path (the
 * message names the first).
 */
export function checkRateCardFile(file: unknown, currency: string): RateCardFile {
  return passed(file, currency, () => new Map())
}

/** The card, or `RateCardFileError` with its first problems, each placed in the file by `locate`. */
function passed(file: unknown, currency: string, locate: (paths: string[]) => Map<string, SourcePosition>): RateCardFile {
  const { card, problems } = inspect(file, currency)
  if (card && problems.length === 0) return card
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS)
  // Only the listed problems are placed: one pass over the text, however many the file has.
  const positions = locate(listed.map((problem) => problem.path))
  throw new RateCardFileError(listed.map((problem) => ({ ...problem, at: positions.get(problem.path) ?? null })), problems.length - listed.length)
}

/** A problem before it is placed in the text. */
type Found = Omit<RateCardProblem, 'at'>

/** `path` locates the problem in the file; `message` says it in full, naming the part. */
type Report = (path: string, message: string) => void

/** The card when the file has its shape, and every problem of the file in either case. */
function inspect(file: unknown, currency: string): { card: RateCardFile | null; problems: Found[] } {
  const problems: Found[] = []
  const report: Report = (path, message) => problems.push({ path, message })
  const parsed = rateCardFileSchema.safeParse(file)
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const where = pathOf(issue.path)
      report(where, where ? `${where}: ${issue.message}` : issue.message)
    }
  }
  // A part out of shape is reported above; the rules still look at every part that has its shape.
  const parts = parsed.success ? partsOfCard(parsed.data) : partsOf(file)
  if (parts.currency !== null && parts.currency !== currency) report('currency', `currency ${parts.currency} does not match this deployment's currency ${currency}`)
  checkZones(parts, report)
  checkLabels(parts, report)
  parts.options.forEach((option, index) => option && checkOption(option, index, parts, report))
  if (parts.bands) checkBikeBands(parts.bands, report)
  return { card: parsed.success ? parsed.data : null, problems }
}

// The file's parts, each read on its own below: a part out of shape hides no problem of another.
const roughShape = z.object({
  currency: rateCardFileSchema.shape.currency.nullable().catch(null),
  zones: z.array(z.unknown()).catch([]),
  options: z.array(z.unknown()).catch([]),
}).catch({ currency: null, zones: [], options: [] })
const zoneShape = rateCardFileSchema.shape.zones.element
const zoneNameShape = zoneShape.pick({ name: true })
const polygonShape = zoneShape.pick({ polygon: true })
const optionShape = rateCardFileSchema.shape.options.element
const labelShape = optionShape.pick({ label: true })
const bandShape = optionShape.pick({ vehicle_type: true, label: true, min_weight_kg: true, max_weight_kg: true })
type Band = Pick<RateCardFileOption, 'vehicle_type' | 'label' | 'min_weight_kg' | 'max_weight_kg'>

/** What the rules look at, by index in the file; null where that part is out of shape. */
interface Parts {
  currency: string | null
  zones: { name: string | null; polygon: [number, number][] | null }[]
  /** Null when a zone's name is out of shape: a price naming that zone is not an unknown zone. */
  zoneNames: Set<string> | null
  labels: (string | null)[]
  options: (RateCardFileOption | null)[]
  /** Null when an option's type or weights are out of shape: a band left out would look like a gap. */
  bands: Band[] | null
}

function partsOfCard(card: RateCardFile): Parts {
  return {
    currency: card.currency,
    zones: card.zones,
    zoneNames: new Set(card.zones.map((zone) => zone.name)),
    labels: card.options.map((option) => option.label),
    options: card.options,
    bands: card.options,
  }
}

function partsOf(file: unknown): Parts {
  const rough = roughShape.parse(file)
  const zones = rough.zones.map((zone) => ({ name: shaped(zoneNameShape, zone)?.name ?? null, polygon: shaped(polygonShape, zone)?.polygon ?? null }))
  const names = zones.map((zone) => zone.name)
  const bands = rough.options.map((option) => shaped(bandShape, option))
  return {
    currency: rough.currency,
    zones,
    zoneNames: names.every((name) => name !== null) ? new Set(names) : null,
    labels: rough.options.map((option) => shaped(labelShape, option)?.label ?? null),
    options: rough.options.map((option) => shaped(optionShape, option)),
    bands: bands.every((band) => band !== null) ? bands : null,
  }
}

function shaped<S extends z.ZodType>(schema: S, value: unknown): z.output<S> | null {
  const parsed = schema.safeParse(value)
  return parsed.success ? parsed.data : null
}

function checkZones({ zones }: Parts, report: Report): void {
  const seen = new Set<string>()
  zones.forEach(({ name, polygon }, index) => {
    if (name !== null && seen.has(name)) report(`zones[${index}].name`, `zones[${index}].name: zone ${name} is listed twice`)
    if (name !== null) seen.add(name)
    const problem = polygon && ringProblem(polygon)
    if (problem) report(`zones[${index}].polygon`, `zones[${index}].polygon${name === null ? '' : ` (${name})`}: ${problem}`)
  })
}

// Error messages name an option by its label, so a label must point at one option.
function checkLabels({ labels }: Parts, report: Report): void {
  const seen = new Set<string>()
  labels.forEach((label, index) => {
    if (label === null) return
    if (seen.has(label)) report(`options[${index}].label`, `options[${index}].label: label ${label} is used by two options`)
    seen.add(label)
  })
}

function checkOption(option: RateCardFileOption, index: number, { zoneNames }: Parts, report: Report): void {
  const path = `options[${index}]`
  const where = `${path} (${option.label})`
  if (option.min_weight_kg !== undefined && option.min_weight_kg >= option.max_weight_kg) {
    report(`${path}.min_weight_kg`, `${where}: min_weight_kg must be below max_weight_kg`)
  }
  const pairs = new Set<string>()
  option.prices.forEach((price, priceIndex) => {
    const at = `${path}.prices[${priceIndex}]`
    const said = `${where}.prices[${priceIndex}]`
    for (const end of ['from', 'to'] as const) {
      if (zoneNames && !zoneNames.has(price[end])) report(`${at}.${end}`, `${said}.${end}: unknown zone ${price[end]}`)
    }
    if (!hasAtMostTwoDecimals(price.price)) report(`${at}.price`, `${said}.price: ${price.price} has more than 2 decimals`)
    else if (price.price > MAX_AMOUNT_MAJOR) report(`${at}.price`, `${said}.price: ${price.price} is more than the most a card may charge, ${MAX_AMOUNT_MAJOR}`)
    const pair = `${price.from}\u0000${price.to}`
    if (pairs.has(pair)) report(at, `${said}: a price from ${price.from} to ${price.to} is listed twice`)
    pairs.add(pair)
  })
}

/** Bike bands must tile the weights they cover: each band starts where the previous one ends. */
function checkBikeBands(options: Band[], report: Report): void {
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
