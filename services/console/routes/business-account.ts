import { Readable } from 'node:stream'
import { stringify } from 'csv-stringify/sync'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { findBusiness } from '../../../shared/db/businesses.js'
import { countOrdersByStatusSince } from '../../../shared/db/orders.js'
import { loadRateCardForBusiness } from '../../../shared/db/rate-cards.js'
import { dailySpend, findWalletView, ledgerAfter, listLedger, type LedgerEntry } from '../../../shared/db/wallets.js'
import { transactionId } from '../../../shared/ids.js'
import { toMajor } from '../../../shared/money.js'
import { buildCatalog } from '../../../shared/pricing/catalog.js'
import { businessIdOf, frameOf, sendPage } from '../reply.js'
import type { ConsoleDeps } from '../deps.js'
import { money, spreadsheetText, when } from '../format.js'
import { livemodeOf, modeQuery, readForm } from '../forms.js'
import { html } from '../html.js'
import { spendChart } from '../pages/chart.js'
import { ledgerTable } from '../pages/ledger.js'

const SPEND_DAYS = 30
const STATEMENT_PAGE = 50
const CSV_BATCH = 1000
const CSV_COLUMNS = ['transaction_id', 'created_at', 'kind', 'amount', 'balance_after', 'currency', 'reference', 'placement_id', 'order_id']

const modeSchema = z.object({ mode: z.string().max(8).optional() })
const statementSchema = modeSchema.extend({ before: z.string().regex(/^\d{1,18}$/, 'is not a page cursor').optional() })

/** The signed amount an entry moved: what the CSV sums to replay the balance. */
function signedAmount(entry: LedgerEntry): number {
  return entry.kind === 'debit' ? -entry.amount : entry.amount
}

/** Overview, the wallet statement (and its CSV), and the catalog: what a business looks at. */
export default async function businessAccountRoutes(app: FastifyInstance, { sql, reads }: ConsoleDeps) {
  app.get('/console', async (request, reply) => {
    const businessId = businessIdOf(request)
    const livemode = livemodeOf(readForm(modeSchema, request.query))
    const today = new Date(new Date().toISOString().slice(0, 10) + 'T00:00:00Z')
    const [business, live, test, statuses, spend] = await Promise.all([
      findBusiness(sql, businessId),
      findWalletView(sql, businessId, true),
      findWalletView(sql, businessId, false),
      countOrdersByStatusSince(reads, { businessId, livemode }, today),
      dailySpend(reads, businessId, livemode, SPEND_DAYS),
    ])
    const currency = business?.currency ?? 'NGN'
    const body = html`<p>${business?.name}</p><div class="cards">
<div class="card"><h2>Live wallet</h2><p class="balance">${live ? money(live.balance, currency) : 'none'}</p><p><a href="/console/wallet">Statement</a></p></div>
<div class="card"><h2>Test wallet</h2><p class="balance">${test ? money(test.balance, currency) : 'not opened: create a test API key'}</p>${test ? html`<p><a href="/console/wallet?mode=test">Statement</a></p>` : ''}</div></div>
<h2>Orders today (${livemode ? 'live' : 'test'})</h2>${statuses.length === 0 ? html`<p>No orders today.</p>` : html`<table><thead><tr><th scope="col">Status</th><th scope="col" class="num">Orders</th></tr></thead>
<tbody>${statuses.map((row) => html`<tr><td><a href="/console/orders?status=${row.status}${modeQuery(livemode, '&')}">${row.status}</a></td><td class="num">${row.count}</td></tr>`)}</tbody></table>`}
<h2>Spend</h2>${spendChart(spend, currency, SPEND_DAYS, today)}`
    return sendPage(reply, 200, frameOf(request, reply, livemode), { title: 'Overview', path: '/console', body })
  })

  app.get('/console/wallet', async (request, reply) => {
    const businessId = businessIdOf(request)
    const query = readForm(statementSchema, request.query)
    const livemode = livemodeOf(query)
    const wallet = await findWalletView(sql, businessId, livemode)
    const frame = frameOf(request, reply, livemode)
    if (!wallet) return sendPage(reply, 200, frame, { title: 'Wallet', path: '/console/wallet', body: html`<p>There is no test wallet yet: create a test API key to open one.</p>` })
    const rows = await listLedger(reads, businessId, { kinds: null, beforeSeq: query.before ? Number(query.before) : null, limit: STATEMENT_PAGE + 1 }, livemode)
    const shown = rows.slice(0, STATEMENT_PAGE)
    const last = shown.at(-1)
    const body = html`<p>Balance: <strong id="wallet-balance">${money(wallet.balance, wallet.currency)}</strong></p>
<p><a href="/console/wallet.csv${modeQuery(livemode)}" download>Download the statement (CSV)</a></p>
${ledgerTable(shown, wallet.currency, '/console/orders/')}
${rows.length > STATEMENT_PAGE && last ? html`<p><a rel="next" href="/console/wallet?before=${last.seq}${modeQuery(livemode, '&')}">Older entries</a></p>` : ''}`
    return sendPage(reply, 200, frame, { title: 'Wallet', path: '/console/wallet', body })
  })

  // Oldest first, so a reader can replay it: each balance_after is the previous one plus the amount.
  app.get('/console/wallet.csv', async (request, reply) => {
    const businessId = businessIdOf(request)
    const livemode = livemodeOf(readForm(modeSchema, request.query))
    const wallet = await findWalletView(sql, businessId, livemode)
    if (!wallet) return reply.callNotFound()
    // Streamed a batch at a time, so a wallet of millions of entries never sits in memory whole.
    const rows = (entries: LedgerEntry[]) => stringify(entries.map((entry) => [
      transactionId(entry.ledgerName, entry.seq), entry.createdAt.toISOString(), entry.kind, toMajor(signedAmount(entry)).toFixed(2), toMajor(entry.balanceAfter).toFixed(2),
      wallet.currency, spreadsheetText(entry.reference ?? ''), entry.placementId ?? '', entry.orderId ?? '',
    ]))
    async function* statement() {
      yield stringify([CSV_COLUMNS])
      for (let afterSeq = 0; ;) {
        const batch = await ledgerAfter(reads, businessId, livemode, afterSeq, CSV_BATCH)
        const last = batch.at(-1)
        if (last) yield rows(batch)
        if (!last || batch.length < CSV_BATCH) return
        afterSeq = last.seq
      }
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="statement-${livemode ? 'live' : 'test'}-${new Date().toISOString().slice(0, 10)}.csv"`)
      .send(Readable.from(statement()))
  })

  app.get('/console/catalog', async (request, reply) => {
    const businessId = businessIdOf(request)
    const [business, card] = await Promise.all([findBusiness(sql, businessId), loadRateCardForBusiness(sql, businessId)])
    const catalog = buildCatalog(card, business?.currency ?? 'NGN')
    const body = catalog.rate_cards.length === 0
      ? html`<p>No rate card is enabled for your business: quotes are priced by distance. Ask an operator to enable one.</p>`
      : html`<p>Rate card version ${catalog.version}, updated ${catalog.updated_at ? when(catalog.updated_at) : ''}. Zones: ${catalog.zones.join(', ')}.</p>
${catalog.rate_cards.map((group) => html`<h2>${group.vehicle_type} (${group.delivery_mode})</h2><table><thead><tr><th scope="col">Option</th><th scope="col">option_id</th><th scope="col">Weight</th></tr></thead>
<tbody>${group.options.map((option) => html`<tr><td>${option.label}</td><td><code>${option.id}</code></td><td>${option.min_weight_kg ?? 0} to ${option.max_weight_kg} kg</td></tr>`)}</tbody></table>`)}`
    return sendPage(reply, 200, frameOf(request, reply), { title: 'Catalog', path: '/console/catalog', body })
  })
}
