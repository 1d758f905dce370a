import type { ConsoleUser } from '../../../shared/db/console-users.js'
import { html, type Html } from '../html.js'
import type { Flash } from '../session-store.js'


/** What every page's frame needs: who is looking, the form token and any message from the last action. */
export interface Frame {
  user: ConsoleUser | null
  csrf: string
  flash: Flash | null
  /** Business pages: the mode they show (`?mode=test`). */
  livemode?: boolean
}

const BUSINESS_NAV = [
  ['/console', 'Overview'],
  ['/console/orders', 'Orders'],
  ['/console/wallet', 'Wallet'],
  ['/console/keys', 'API keys'],
  ['/console/webhooks', 'Webhooks'],
  ['/console/catalog', 'Catalog'],
] as const

const OPERATOR_NAV = [
  ['/console/ops/businesses', 'Businesses'],
  ['/console/ops/rate-cards', 'Rate cards'],
  ['/console/ops/platform-rates', 'Platform rates'],
  ['/console/ops/orders', 'Orders'],
  ['/console/ops/waiting', 'Waiting for a courier'],
  ['/console/ops/couriers', 'Couriers'],
  ['/console/ops/audit', 'Audit trail'],
] as const

/** A form that posts with the CSRF token; every state change goes through one. */
export function form(frame: Frame, action: string, body: Html, extra: { multipart?: boolean; label?: string } = {}): Html {
  // A multipart body is read only after the CSRF check, so its token rides in the query string.
  const target = extra.multipart ? `${action}?_csrf=${encodeURIComponent(frame.csrf)}` : action
  return html`<form method="post" action="${target}"${extra.multipart ? html` enctype="multipart/form-data"` : ''}${extra.label ? html` aria-label="${extra.label}"` : ''}>
<input type="hidden" name="_csrf" value="${frame.csrf}">${body}</form>`
}

/** A one-button form (revoke, cancel, rotate): the button names the action for screen readers. */
export function actionButton(frame: Frame, action: string, label: string, fields: Record<string, string> = {}): Html {
  const hidden = Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)
  return form(frame, action, html`${hidden}<button type="submit">${label}</button>`)
}

/**
 * A labelled input with its error, if any, right under it (`aria-describedby`); `id` tells apart
 * two forms of one page with a field of the same name.
 */
export function field(input: { name: string; label: string; id?: string; type?: string; value?: string; error?: string | null; required?: boolean; attrs?: Html }): Html {
  const id = input.id ?? `field-${input.name}`
  const errorId = `${id}-error`
  return html`<div class="field${input.error ? ' invalid' : ''}">
<label for="${id}">${input.label}</label>
<input id="${id}" name="${input.name}" type="${input.type ?? 'text'}" value="${input.value ?? ''}"${input.required ? html` required` : ''}${input.error ? html` aria-invalid="true" aria-describedby="${errorId}"` : ''}${input.attrs ?? ''}>
${input.error ? html`<p class="error" id="${errorId}">${input.error}</p>` : ''}</div>`
}

/** A labelled choice, with its error under it like `field`'s. */
export function select(input: { name: string; label: string; options: readonly (readonly [string, string])[]; value?: string; error?: string | null }): Html {
  const id = `field-${input.name}`
  const errorId = `${id}-error`
  return html`<div class="field${input.error ? ' invalid' : ''}"><label for="${id}">${input.label}</label>
<select id="${id}" name="${input.name}"${input.error ? html` aria-invalid="true" aria-describedby="${errorId}"` : ''}>${input.options.map(([value, text]) => html`<option value="${value}"${value === input.value ? html` selected` : ''}>${text}</option>`)}</select>
${input.error ? html`<p class="error" id="${errorId}">${input.error}</p>` : ''}</div>`
}

function nav(frame: Frame, current: string): Html {
  if (!frame.user) return html``
  const links = frame.user.role === 'operator' ? OPERATOR_NAV : BUSINESS_NAV
  const mode = frame.user.role === 'business' && frame.livemode === false ? '?mode=test' : ''
  return html`<nav aria-label="Main"><ul>${links.map(([href, text]) => html`<li><a href="${href}${mode}"${href === current ? html` aria-current="page"` : ''}>${text}</a></li>`)}</ul></nav>
<div class="who"><span>${frame.user.email} (${frame.user.role})</span>${form(frame, '/console/logout', html`<button type="submit">Log out</button>`)}${form(frame, '/console/logout/everywhere', html`<button type="submit">Log out everywhere</button>`)}</div>`
}

function modeSwitch(frame: Frame, current: string): Html {
  if (frame.user?.role !== 'business' || frame.livemode === undefined) return html``
  return html`<p class="mode">Showing <strong>${frame.livemode ? 'live' : 'test'}</strong> data.
<a href="${current}${frame.livemode ? '?mode=test' : ''}">Show ${frame.livemode ? 'test' : 'live'} data</a></p>`
}

/** The frame of every page: a skip link, the navigation, the page's title and its message. */
export function layout(frame: Frame, page: { title: string; path: string; body: Html }): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Courier console</title><link rel="stylesheet" href="/console/assets/console.css"></head>
<body><a class="skip" href="#main">Skip to content</a>
<header><p class="brand">Courier console</p>${nav(frame, page.path)}</header>
<main id="main"><h1>${page.title}</h1>${modeSwitch(frame, page.path)}
${frame.flash ? html`<p class="flash ${frame.flash.kind}" role="${frame.flash.kind === 'error' ? 'alert' : 'status'}">${frame.flash.text}</p>` : ''}
${page.body}</main></body></html>`
}

export const CONSOLE_CSS = `
body{font:15px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#12324a;color:#fff;padding:.5rem 1rem;display:flex;flex-wrap:wrap;gap:1rem;align-items:center}
header a{color:#fff}.brand{font-weight:700;margin:0}
nav ul{list-style:none;display:flex;gap:1rem;margin:0;padding:0}[aria-current=page]{font-weight:700;text-decoration:underline}
.who{margin-left:auto;display:flex;gap:.5rem;align-items:center}.who form{margin:0}
main{max-width:72rem;margin:1rem auto;padding:0 1rem}
.skip{position:absolute;left:-999px}.skip:focus{left:1rem;top:1rem;background:#fff;padding:.5rem}
table{border-collapse:collapse;width:100%;background:#fff;margin:.5rem 0 1rem}th,td{border:1px solid #d5d9de;padding:.3rem .5rem;text-align:left;vertical-align:top}
td.num,th.num{text-align:right}
form{margin:.5rem 0}.field{margin:.4rem 0}.field label{display:block;font-weight:600}
input,select,textarea,button{font:inherit;padding:.3rem .5rem}button{cursor:pointer}
.invalid input,.invalid select{border:2px solid #b00020}.error{color:#b00020;margin:.2rem 0}
.flash{padding:.5rem;border-radius:4px}.flash.ok{background:#e3f4e8}.flash.error{background:#fde7ea}
.secret{font-family:monospace;background:#fff8d6;padding:.5rem;word-break:break-all}
.cards{display:flex;gap:1rem;flex-wrap:wrap}.card{background:#fff;border:1px solid #d5d9de;padding:.5rem 1rem;min-width:12rem}
ol.problems li{margin:.2rem 0}code{background:#eef0f3;padding:0 .2rem}
ol.listing{font-size:13px;background:#fff;border:1px solid #d5d9de;padding-left:3.5rem}ol.listing li.problem{background:#fde7ea}ol.listing code{background:none;white-space:pre}
.visually-hidden{position:absolute;left:-999px}
img.proof-photo{max-width:100%;height:auto;border:1px solid #d5d9de}
svg.chart rect{fill:#2a6f97}svg.chart text{font-size:10px;fill:#333}
:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
`
