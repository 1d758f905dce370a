import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { importRateCardAs } from '../../../shared/accounts/operator-actions.js'
import { getPlatformRates } from '../../../shared/db/platform-rates.js'
import { listRateCards } from '../../../shared/db/rate-cards.js'
import { RateCardFileError } from '../../../shared/errors/rate-card-file-error.js'
import { actorOf, frameOf, redirectWith, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { money, when } from '../format.js'
import { readForm } from '../forms.js'
import { html, type Html } from '../html.js'
import { fileWithProblems } from '../pages/json-listing.js'
import { form } from '../pages/layout.js'

const importSchema = z.object({ _csrf: z.string(), file: z.instanceof(Buffer, { error: 'choose a rate-card file' }) })

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
    const input = readForm(importSchema, request.body)
    let file: unknown
    try {
      file = JSON.parse(input.file.toString('utf8'))
    } catch (err) {
      return cardsPage(request, reply, 400, html`<div role="alert" class="flash error"><p>The file is not valid JSON: ${(err as Error).message}</p></div>`)
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

  app.get('/console/ops/platform-rates', async (request, reply) => {
    const rates = await getPlatformRates(sql)
    const body = html`<p>Distance pricing, for businesses without a rate card, and the cancellation terms of every order.</p>
<table><tbody>
<tr><th scope="row">Base fare</th><td>${money(rates.baseFare, config.CURRENCY)}</td></tr>
<tr><th scope="row">Per km</th><td>${money(rates.perKm, config.CURRENCY)}</td></tr>
<tr><th scope="row">Per kg</th><td>${money(rates.perKg, config.CURRENCY)}</td></tr>
<tr><th scope="row">Minimum fare</th><td>${money(rates.minFare, config.CURRENCY)}</td></tr>
<tr><th scope="row">Road factor</th><td>${rates.roadFactor}</td></tr>
<tr><th scope="row">Longest trip</th><td>${rates.maxDistanceKm} km</td></tr>
<tr><th scope="row">Free cancellation after assignment</th><td>${rates.cancelFreeWindowS} s</td></tr>
<tr><th scope="row">Cancellation fee after that</th><td>${rates.cancellationFeePercent} %</td></tr></tbody></table>
<p>Change them with <code>npm run admin -- platform-rates:set</code> (docs/contracts.md section 4).</p>`
    return sendPage(reply, 200, frameOf(request, reply), { title: 'Platform rates', path: '/console/ops/platform-rates', body })
  })
}
