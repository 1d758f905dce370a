import type { LedgerEntry } from '../../../shared/db/wallets.js'
import { transactionId } from '../../../shared/ids.js'
import { money, when } from '../format.js'
import { html, type Html } from '../html.js'

/** A wallet's statement, newest first, each line with the balance it left. */
export function ledgerTable(entries: LedgerEntry[], currency: string, orderPath: string): Html {
  if (entries.length === 0) return html`<p>No entries yet.</p>`
  return html`<table aria-label="Wallet statement"><thead><tr><th scope="col">Transaction</th><th scope="col">When</th><th scope="col">Kind</th>
<th scope="col" class="num">Amount</th><th scope="col" class="num">Balance after</th><th scope="col">Reference</th></tr></thead><tbody>
${entries.map((entry) => html`<tr><td>${transactionId(entry.ledgerName, entry.seq)}</td><td>${when(entry.createdAt)}</td><td>${entry.kind}</td>
<td class="num">${entry.kind === 'debit' ? '−' : '+'}${money(entry.amount, currency)}</td><td class="num">${money(entry.balanceAfter, currency)}</td>
<td>${entry.reference ?? (entry.orderId ? html`<a href="${orderPath}${entry.orderId}">${entry.orderId}</a>` : entry.placementId ?? '')}</td></tr>`)}</tbody></table>`
}
