import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { listRateCards } from '../../../shared/db/rate-cards.js'
import { errorCode } from '../../../shared/errors/error-message.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import type { PlatformRates } from '../../../shared/courier.js'
import { changePlatformRates, MAX_FARE_MAJOR, PLATFORM_RATE_LIMITS, readPlatformRate } from '../../../shared/pricing/platform-rates.js'
import { actorOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { money, when } from '../format.js'
import { checkForm, FormError, typed, type FormState } from '../forms.js'
import { html, type Html } from '../html.js'
import { rateCardRefusal } from '../pages/json-listing.js'
import { field, form } from '../pages/layout.js'

// Each rate read and bounded by the rules of `platform-rates:set`, to the number changePlatformRates takes.
const rate = (field: keyof PlatformRates) => z.string().max(32).transform((text, ctx) => {
  const reading = readPlatformRate(field, text)
  if (reading.kind === 'ok') return reading.value
  ctx.addIssue({ code: 'custom', message: `${reading.problem}, got '${text}'` })
  return z.NEVER
})
const ratesSchema = z.object({
  _csrf: z.string(), baseFare: rate('baseFare'), perKm: rate('perKm'), perKg: rate('perKg'), minFare: rate('minFare'),
  roadFactor: rate('roadFactor'), maxDistanceKm: rate('maxDistanceKm'), cancelFreeWindowS: rate('cancelFreeWindowS'), cancellationFeePercent: rate('cancellationFeePercent'),
  bikeSpeedKmh: rate('bikeSpeedKmh'), carSpeedKmh: rate('carSpeedKmh'), busVanSpeedKmh: rate('busVanSpeedKmh'), truckSpeedKmh: rate('truckSpeedKmh'),
})

// How the form names each rate: its labels start with these, and so do its messages.
const RATE_NAMES: Record<keyof PlatformRates, string> = {
  baseFare: 'Base fare', perKm: 'Per km', perKg: 'Per kg', minFare: 'Minimum fare',
  roadFactor: 'Road factor', maxDistanceKm: 'Longest trip', cancelFreeWindowS: 'Free cancellation after assignment', cancellationFeePercent: 'Cancellation fee after that',
  bikeSpeedKmh: 'Bike speed for ETAs', carSpeedKmh: 'Car speed for ETAs', busVanSpeedKmh: 'Bus/van speed for ETAs', truckSpeedKmh: 'Truck speed for ETAs',
}

/** Rate cards (import, versions) and the platform's distance rates. */
export default async function operatorPricingRoutes(app: FastifyInstance, { sql, config, announce }: ConsoleDeps) {
  async function cardsPage(request: FastifyRequest, reply: FastifyReply, status: number, refused: Html | null) {
    const frame = frameOf(request, reply)
    const cards = await listRateCards(sql)
    const body = html`${refused ?? ''}<h2>Import a rate card</h2>
<p>A JSON file in the format of <code>shared/pricing/demo-rate-card.json</code>. A card whose name exists becomes its next version, and every business that prices with it uses the new version at once.</p>
${form(frame, '/console/ops/rate-cards', html`<div class="field"><label for="field-file">Rate-card file (JSON)</label><input id="field-file" name="file" type="file" accept="application/json,.json" required></div>
<button type="submit">Import rate card</button>`, { multipart: true, label: 'Import a rate card' })}
<h2>Cards</h2>${cards.length === 0 ? html`<p>No rate cards yet.</p>` : html`<table><thead><tr><th scope="col">Name</th><th scope="col">Versions</th><th scope="col" class="num">Businesses</th></tr></thead><tbody>
${cards.map((card) => html`<tr><td>${card.name}<br><code>${card.id}</code></td><td><ul>${card.versions.map((version) => html`<li>version ${version.version}, ${when(version.createdAt)}</li>`)}</ul></td><td class="num">${card.businesses}</td></tr>`)}</tbody></table>
<p>Enable a card for a business on <a href="/console/ops/businesses">the business's page</a>.</p>`}`
    return sendPage(reply, status, frame, { title: 'Rate cards', path: '/console/ops/rate-cards', body })
  }

  app.get('/console/ops/rate-cards', (request, reply) => cardsPage(request, reply, 200, null))

  app.post('/console/ops/rate-cards', async (request, reply) => {
    // Read here, after the login and CSRF checks: nothing of an anonymous upload is parsed.
    const text = await readUpload(request)
    try {
      const imported = await importRateCardAs(sql, actorOf(request), text, config.CURRENCY)
      await announce({ kind: 'rate-card', rateCardId: imported.rate_card_id })
      return redirectWith(request, reply, '/console/ops/rate-cards', { kind: 'ok', text: `Imported ${imported.name} as version ${imported.version} with ${imported.options.length} options.` })
    } catch (err) {
      if (!(err instanceof RateCardFileError)) throw err
      return cardsPage(request, reply, 422, rateCardRefusal(text, err))
    }
  })

  /**
   * The uploaded file's text. A body the multipart parser cannot read (no boundary, an upload cut
   * short) is the form's 400; the parser's own limits (a file too large: 413) keep their status.
   */
  async function readUpload(request: FastifyRequest): Promise<string> {
    try {
      const upload = request.isMultipart() ? await request.file() : undefined
      if (!upload || upload.fieldname !== 'file') throw new FormError('file: choose a rate-card file')
      return (await upload.toBuffer()).toString('utf8')
    } catch (err) {
      if (err instanceof FormError || String(errorCode(err)).startsWith('FST_')) throw err
      throw new FormError('file: the upload could not be read; choose the file and send it again')
    }
  }

  async function ratesPage(request: FastifyRequest, reply: FastifyReply, status: number, typedRates: FormState | null) {
    const frame = frameOf(request, reply)
    if (typedRates) frame.flash = { kind: 'error', text: 'Nothing was saved: correct the marked fields.' }
    const rates = await getPlatformRates(sql)
    // What is in force, as an operator types it, until a refused form brings back what they typed.
    const shown = typedRates ?? { values: ratesAsTyped(rates), errors: {} }
    const rateField = (name: keyof PlatformRates, hint: string) => field({ ...typed(shown, name), label: `${RATE_NAMES[name]} (${hint})`, required: true })
    const { roadFactor, maxDistanceKm, cancelFreeWindowS, cancellationFeePercent } = PLATFORM_RATE_LIMITS
    const body = html`<p>Distance pricing, for businesses without a rate card, and the cancellation terms of every order.
Now: ${money(rates.baseFare, config.CURRENCY)} + ${money(rates.perKm, config.CURRENCY)}/km + ${money(rates.perKg, config.CURRENCY)}/kg, at least ${money(rates.minFare, config.CURRENCY)}.</p>
${form(frame, '/console/ops/platform-rates', html`
${rateField('baseFare', `${config.CURRENCY}, up to ${MAX_FARE_MAJOR}`)}
${rateField('perKm', `${config.CURRENCY}, up to ${MAX_FARE_MAJOR}`)}
${rateField('perKg', `${config.CURRENCY}, up to ${MAX_FARE_MAJOR}`)}
${rateField('minFare', `${config.CURRENCY}, up to ${MAX_FARE_MAJOR}`)}
${rateField('roadFactor', `road km per straight-line km, from ${roadFactor.min} to ${roadFactor.max}`)}
${rateField('maxDistanceKm', `km, from ${maxDistanceKm.min} to ${maxDistanceKm.max}`)}
${rateField('cancelFreeWindowS', `seconds, from ${cancelFreeWindowS.min} to ${cancelFreeWindowS.max}`)}
${rateField('cancellationFeePercent', `% of the price, from ${cancellationFeePercent.min} to ${cancellationFeePercent.max}`)}
${(['bikeSpeedKmh', 'carSpeedKmh', 'busVanSpeedKmh', 'truckSpeedKmh'] as const).map((name) => rateField(name, `km/h on the road, from ${PLATFORM_RATE_LIMITS[name].min} to ${PLATFORM_RATE_LIMITS[name].max}`))}
<button type="submit">Save platform rates</button>`, { label: 'Platform rates' })}`
    return sendPage(reply, status, frame, { title: 'Platform rates', path: '/console/ops/platform-rates', body })
  }

  app.get('/console/ops/platform-rates', (request, reply) => ratesPage(request, reply, 200, null))

  // The same rules as `platform-rates:set` (readPlatformRate); a refused form comes back as typed, each refused rate marked.
  app.post('/console/ops/platform-rates', async (request, reply) => {
    const checked = checkForm(ratesSchema, request.body, RATE_NAMES)
    if (checked.kind === 'refused') return ratesPage(request, reply, 400, checked.form)
    // Read by the rules changePlatformRates checks again: it has nothing left to refuse.
    const { _csrf, ...change } = checked.input
    await changePlatformRates(sql, change, { actor: actorOf(request) })
    await announce({ kind: 'platform-rates' })
    return redirectWith(request, reply, '/console/ops/platform-rates', { kind: 'ok', text: 'The platform rates are saved; quotes use them within a second.' })
  })
}

/** The rates as the form's fields hold them: money in major units with two decimals. */
function ratesAsTyped(rates: PlatformRates): Record<keyof PlatformRates, string> {
  const major = (kobo: number) => (kobo / 100).toFixed(2)
  return {
    baseFare: major(rates.baseFare), perKm: major(rates.perKm), perKg: major(rates.perKg), minFare: major(rates.minFare),
    roadFactor: String(rates.roadFactor), maxDistanceKm: String(rates.maxDistanceKm), cancelFreeWindowS: String(rates.cancelFreeWindowS), cancellationFeePercent: String(rates.cancellationFeePercent),
    bikeSpeedKmh: String(rates.bikeSpeedKmh), carSpeedKmh: String(rates.carSpeedKmh), busVanSpeedKmh: String(rates.busVanSpeedKmh), truckSpeedKmh: String(rates.truckSpeedKmh),
  }
}
