import { lookup } from 'node:dns/promises'
import { BlockList, isIP, type LookupFunction } from 'node:net'
import { lookup as lookupCallback } from 'node:dns'

/** How strict the URL rules are: both relaxed under `npm start` and in tests, strict in production. */
export interface UrlRules {
  allowHttp: boolean
  allowPrivate: boolean
}

export type UrlVerdict = { ok: true; url: URL } | { ok: false; message: string }

// Private, loopback, link-local, carrier-grade NAT, "this network", multicast and reserved ranges,
// and their IPv6 counterparts. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) are checked against the
// IPv4 rules by BlockList itself; a rule for ::ffff:0:0/96 would instead match every IPv4 address,
// since BlockList checks IPv4 addresses against IPv6 rules in their mapped form.
const PRIVATE = new BlockList()
for (const [network, prefix] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6')
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return true
  if (family === 6 && address.toLowerCase().startsWith('::ffff:')) {
    const mapped = address.slice(7)
    if (isIP(mapped) === 4) return PRIVATE.check(mapped, 'ipv4')
  }
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6')
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
  if (rules.allowPrivate) return { ok: true, url }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((entry) => entry.address)
  } catch {
    return { ok: false, message: 'url host could not be resolved' }
  }
  if (addresses.length === 0) return { ok: false, message: 'url host could not be resolved' }
  if (addresses.some(isPrivateAddress)) return { ok: false, message: 'url host resolves to a private address' }
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
