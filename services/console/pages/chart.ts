import { html, type Html } from '../html.js'
import { money } from '../format.js'

/**
 * Spend per day as an SVG bar chart, drawn on the server so it needs no script, with the same
 * figures as a table for screen readers and keyboards.
 */
export function spendChart(days: { day: string; spent: number }[], currency: string, span: number, today: Date): Html {
  const byDay = new Map(days.map((entry) => [entry.day, entry.spent]))
  const series = Array.from({ length: span }, (_, index) => {
    const day = new Date(today.getTime() - (span - 1 - index) * 86_400_000).toISOString().slice(0, 10)
    return { day, spent: Math.max(0, byDay.get(day) ?? 0) }
  })
  const peak = Math.max(0, ...series.map((entry) => entry.spent))
  const top = Math.max(1, peak)
  const width = 12
  const height = 120
  const bars = series.map((entry, index) => {
    const barHeight = Math.round((entry.spent / top) * height)
    return html`<rect x="${index * (width + 2)}" y="${height - barHeight}" width="${width}" height="${barHeight}"><title>${entry.day}: ${money(entry.spent, currency)}</title></rect>`
  })
  const total = series.reduce((sum, entry) => sum + entry.spent, 0)
  return html`<figure><svg class="chart" role="img" aria-labelledby="spend-caption" viewBox="0 0 ${span * (width + 2)} ${height + 14}" width="${span * (width + 2) * 1.5}" height="${(height + 14) * 1.5}">
${bars}<text x="0" y="${height + 12}">${series[0].day}</text><text x="${span * (width + 2)}" y="${height + 12}" text-anchor="end">${series[span - 1].day}</text></svg>
<figcaption id="spend-caption">Spend over the last ${span} days: ${money(total, currency)} (peak day ${money(peak, currency)})</figcaption></figure>
<details><summary>Spend by day as a table</summary><table><thead><tr><th scope="col">Day</th><th scope="col" class="num">Spent</th></tr></thead>
<tbody>${series.filter((entry) => entry.spent > 0).map((entry) => html`<tr><td>${entry.day}</td><td class="num">${money(entry.spent, currency)}</td></tr>`)}</tbody></table></details>`
}
