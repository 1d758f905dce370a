import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { listRateCards } from '../../../shared/db/rate-cards.js'
import { PlatformRatesError } from '../../../shared/errors/platform-rates-error.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import { readMajorAmount } from '../../../shared/money.js'
import { changePlatformRates, type PlatformRatesChange } from '../../../shared/pricing/platform-rates.js'
import { actorOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { money, when } from '../format.js'
import { FormError, readForm } from '../forms.js'
import { html, type Html } from '../html.js'
import { fileWithProblems } from '../pages/json-listing.js'
import { field, form } from '../pages/layout.js'
import { errorMessage } from '../../../shared/errors/error-message.js'

const rateText = z.string().max(32)
const ratesSchema = z.object({ _csrf: z.string(), baseFare: rateText, perKm: rateText, perKg: rateText, minFare: rateText, roadFactor: rateText, maxDistanceKm: rateText, cancelFreeWindowS: rateText, cancellationFeePercent: rateText })

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
    const upload = request.isMultipart() ? await request.file() : undefined
    if (!upload || upload.fieldname !== 'file') throw new FormError('file: choose a rate-card file')
    const content = await upload.toBuffer()
    let file: unknown
    try {
      file = JSON.parse(content.toString('utf8'))
    } catch (err) {
      return cardsPage(request, reply, 400, html`<div role="alert" class="flash error"><p>The file is not valid JSON: ${errorMessage(err)}</p></div>`)
    }
    try {
      const imported = await importRateCardAs(sql, actorOf(request), file, config.CURRENCY)
      await announce({ kind: 'rate-card', rateCardId: imported.rate_card_id })
      return redirectWith(request, reply, '/console/ops/rate-cards', { kind: 'ok', text: `Imported ${imported.name} as version ${imported.version} with ${imported.options.length} options.` })
    } catch (err) {
      if (!(err instanceof RateCardFileError)) throw err
      const refused = html`<div role="alert" class="flash error"><p>Nothing was imported: the file has ${err.problems.length} problem${err.problems.length === 1 ? '' : 's'}, each shown where it is.</p>
<ol class="problems">${err.problems.map((problem) => html`<li>${problem.message}</li>`)}</ol></div>${fileWithProblems(file, err.problems)}`
      return cardsPage(request, reply, 422, refused)
    }
  })

  async function ratesPage(request: FastifyRequest, reply: FastifyReply, status: number, error: string | null) {
    const frame = frameOf(request, reply)
    const rates = await getPlatformRates(sql)
    const major = (kobo: number) => (kobo / 100).toFixed(2)
    const body = html`<p>Distance pricing, for businesses without a rate card, and the cancellation terms of every order.
Now: ${money(rates.baseFare, config.CURRENCY)} + ${money(rates.perKm, config.CURRENCY)}/km + ${money(rates.perKg, config.CURRENCY)}/kg, at least ${money(rates.minFare, config.CURRENCY)}.</p>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
${form(frame, '/console/ops/platform-rates', html`
${field({ name: 'baseFare', label: `Base fare (${config.CURRENCY})`, value: major(rates.baseFare), required: true })}
${field({ name: 'perKm', label: `Per km (${config.CURRENCY})`, value: major(rates.perKm), required: true })}
${field({ name: 'perKg', label: `Per kg (${config.CURRENCY})`, value: major(rates.perKg), required: true })}
${field({ name: 'minFare', label: `Minimum fare (${config.CURRENCY})`, value: major(rates.minFare), required: true })}
${field({ name: 'roadFactor', label: 'Road factor (road km per straight-line km, at least 1)', value: String(rates.roadFactor), required: true })}
${field({ name: 'maxDistanceKm', label: 'Longest trip (km)', value: String(rates.maxDistanceKm), required: true })}
${field({ name: 'cancelFreeWindowS', label: 'Free cancellation after assignment (seconds)', value: String(rates.cancelFreeWindowS), required: true })}
${field({ name: 'cancellationFeePercent', label: 'Cancellation fee after that (%)', value: String(rates.cancellationFeePercent), required: true })}
<button type="submit">Save platform rates</button>`, { label: 'Platform rates' })}`
    return sendPage(reply, status, frame, { title: 'Platform rates', path: '/console/ops/platform-rates', body })
  }

  app.get('/console/ops/platform-rates', (request, reply) => ratesPage(request, reply, 200, null))

  // The same rules as `platform-rates:set`: money read like every amount an operator types, the rest checked by changePlatformRates.
  app.post('/console/ops/platform-rates', async (request, reply) => {
    const input = readForm(ratesSchema, request.body)
    const change: PlatformRatesChange = {}
    for (const field of ['baseFare', 'perKm', 'perKg', 'minFare'] as const) {
      const amount = readMajorAmount(input[field], { allowZero: true })
      if (amount.kind === 'invalid') return ratesPage(request, reply, 400, `${field} must be a non-negative amount with at most 2 decimals, got '${input[field]}'`)
      change[field] = amount.kobo / 100
    }
    for (const field of ['roadFactor', 'maxDistanceKm', 'cancelFreeWindowS', 'cancellationFeePercent'] as const) {
      const value = input[field].trim() === '' ? Number.NaN : Number(input[field])
      if (!Number.isFinite(value)) return ratesPage(request, reply, 400, `${field} must be a number, got '${input[field]}'`)
      change[field] = value
    }
    try {
      await changePlatformRates(sql, change, { actor: actorOf(request) })
    } catch (err) {
      if (err instanceof PlatformRatesError) return ratesPage(request, reply, 400, err.message)
      throw err
    }
    await announce({ kind: 'platform-rates' })
    return redirectWith(request, reply, '/console/ops/platform-rates', { kind: 'ok', text: 'The platform rates are saved; quotes use them within a second.' })
  })
}
