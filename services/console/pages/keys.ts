import type { ListedApiKey } from '../../../shared/db/api-keys.js'
import { when } from '../format.js'
import { html, type Html } from '../html.js'

/** A business's keys by their prefix; `revoke` draws the button for a key still active. */
export function keyTable(keys: ListedApiKey[], revoke: (key: ListedApiKey) => Html): Html {
  if (keys.length === 0) return html`<p>No API keys yet.</p>`
  return html`<table aria-label="API keys"><thead><tr><th scope="col">Key</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Status</th></tr></thead><tbody>
${keys.map((key) => html`<tr><td><code>${key.displayPrefix}…</code></td><td>${key.livemode ? 'live' : 'test'}</td><td>${key.scopes.join(', ')}</td><td>${when(key.createdAt)}</td>
<td>${key.revokedAt ? html`revoked ${when(key.revokedAt)}` : revoke(key)}</td></tr>`)}</tbody></table>`
}
