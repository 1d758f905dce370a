import { lookup } from 'node:dns/promises'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import { lookup as lookupCallback } from 'node:dns'

/** How strict the URL rules are: both relaxed under `npm start` and in tests, strict in production. */
export interface UrlRules {
  allowHttp: boolean
  allowPrivate: boolean
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; message: string }

/**
 * Whether a webhook may not be sent to this address: anything but a public unicast address.
 * ipaddr.js names every special-purpose range of the IANA registries (private, loopback,
 * link-local, carrier-grade NAT, multicast, reserved and documentation blocks, site-local,
 * unique-local, discard). IPv4-mapped addresses (`::ffff:a.b.c.d`) are judged as the IPv4
 * address they carry. The transition forms that reach IPv4 through a translator or tunnel
 * (NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`,
 * SIIT `::ffff:0:0:0/96`) and IPv4-compatible `::a.b.c.d` are refused whatever they embed:
 * no receiver needs them, and the embedded address is only what a translator may reach.
 */
export function isPrivateAddress(address: string): boolean {
  if (isIP(address) === 0) return true
  const parsed = ipaddr.parse(address)
  if (parsed instanceof ipaddr.IPv6) {
    if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().range() !== 'unicast'
    if (parsed.parts.slice(0, 6).every((part) => part === 0)) return true
  }
  return parsed.range() !== 'unicast'
}

const MAX_URL_LENGTH = 2048

/**
 * The rules of a webhook URL (docs/contracts.md section 7): absolute, `https://` (or `http://`
 * when allowed), no credentials, and a host that resolves, to public addresses only unless
 * private ones are allowed. Checked when an endpoint is created and again at every delivery.
 */
export async function checkWebhookUrl(text: string, rules: UrlRules): Promise<UrlVerdict> {
  if (text.length > MAX_URL_LENGTH) return { ok: false, message: `url must be shorter than or equal to ${MAX_URL_LENGTH} characters` }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return { ok: false, message: 'url must be an absolute URL' }
  }
  if (url.protocol !== 'https:' && !(rules.allowHttp && url.protocol === 'http:')) return { ok: false, message: 'url must use https' }
  if (url.username !== '' || url.password !== '') return { ok: false, message: 'url must not carry credentials' }
  // Allowed private addresses (npm start, tests) still need a host that resolves: only the
  // address rule is relaxed, so a typo is a 400 at creation, not a log of failed attempts.
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address)
  } catch {
    return { ok: false, message: 'url host could not be resolved' }
  }
  if (addresses.length === 0) return { ok: false, message: 'url host could not be resolved' }
  if (!rules.allowPrivate && addresses.some(isPrivateAddress)) return { ok: false, message: 'url host resolves to a private address' }
  return { ok: true, url }
}

/**
 * A DNS lookup for the sender's sockets that refuses private addresses at connect time, so a
 * host that passed the check cannot be re-pointed at an internal address in between (DNS
 * rebinding). With private addresses allowed it is the plain lookup.
 */
export function guardedLookup(rules: UrlRules): LookupFunction {
  return (hostname, options, callback) => {
    lookupCallback(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '')
      const allowed = rules.allowPrivate ? addresses : addresses.filter((entry) => !isPrivateAddress(entry.address))
      const first = allowed[0]
      if (!first) return callback(Object.assign(new Error('url host resolves to a private address'), { code: 'EPRIVATE' }), '')
      return options.all ? callback(null, allowed) : callback(null, first.address, first.family)
    })
  }
}
