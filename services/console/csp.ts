/**
 * The console's Content-Security-Policy directives (helmet adds its defaults): no page runs a
 * script unless it says so (the courier app's one file, from 'self'); forms post only here;
 * plain http://localhost is not upgraded.
 */
export function cspDirectives(local: boolean, scripts: 'none' | 'self' = 'none') {
  return { 'script-src': [scripts === 'none' ? "'none'" : "'self'"], 'form-action': ["'self'"], 'frame-ancestors': ["'none'"], 'upgrade-insecure-requests': local ? null : [] }
}
