import type { StoredAuditEntry } from '../../../shared/db/audit.js'
import { MONEY_RATES } from '../../../shared/pricing/platform-rates.js'
import { majorMoney, money, when } from '../format.js'
import { html, type Html } from '../html.js'

// The money in an audit row's before and after, in the unit its action wrote it: credits and
// refunds in naira, as the API shows amounts; platform rates in kobo, as they are stored.
function moneyIn(action: string): { fields: ReadonlySet<string>; inKobo: boolean } | null {
  if (action === 'platform-rates.set') return { fields: MONEY_RATES, inKobo: true }
  if (action === 'wallet.credit') return { fields: new Set(['balance', 'amount']), inKobo: false }
  if (action === 'order.advance' || action === 'order.cancel') return { fields: new Set(['refund']), inKobo: false }
  return null
}

/** A row's state before or after, field by field, its money in naira with the currency like every amount of the console. */
function stateOf(action: string, state: unknown, currency: string): string {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return JSON.stringify(state)
  const amounts = moneyIn(action)
  return Object.entries(state).map(([field, value]) => {
    if (!amounts?.fields.has(field) || typeof value !== 'number') return `${field}: ${JSON.stringify(value)}`
    return `${field}: ${amounts.inKobo ? money(value, currency) : majorMoney(value, currency)}`
  }).join(', ')
}

/** The audit trail, newest first: who did what to which business and thing, with the state before and after. */
export function auditTable(entries: StoredAuditEntry[], currency: string): Html {
  return html`<table aria-label="Audit trail"><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Business</th><th scope="col">Subject</th><th scope="col">Before</th><th scope="col">After</th></tr></thead><tbody>
${entries.map((entry) => html`<tr><td>${when(entry.at)}</td><td>${entry.actor}</td><td>${entry.action}</td><td>${entry.businessId ? html`<a href="/console/ops/businesses/${entry.businessId}">${entry.businessId.slice(0, 8)}</a>` : ''}</td>
<td>${entry.subject}</td><td><code>${stateOf(entry.action, entry.before, currency)}</code></td><td><code>${stateOf(entry.action, entry.after, currency)}</code></td></tr>`)}</tbody></table>`
}
