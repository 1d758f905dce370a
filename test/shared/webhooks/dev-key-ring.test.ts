import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import t from 'tap'
import { devWebhookSecretKeys, withDevWebhookSecretKeys } from '../../../shared/webhooks/dev-key-ring.js'

// `npm start`'s webhook key ring (.dev-secrets/) and the one-shot commands' fallback to it: only
// when WEBHOOK_SECRET_KEYS is unset, never under NODE_ENV=production, and never a ring made up.

t.test('an unset ring outside production is npm start\'s; a set one, production, or no ring on disk leave the environment as it is', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dev-key-ring-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'webhook-secret-keys')
  const missing = path.join(dir, 'none', 'webhook-secret-keys')
  const ring = devWebhookSecretKeys(file)
  t.match(ring, /^dev:[A-Za-z0-9+/]{43}=$/, 'made once: a dev key of 32 bytes')
  t.equal(devWebhookSecretKeys(file), ring, 'and the same ring every run after')

  t.equal(withDevWebhookSecretKeys({}, file).WEBHOOK_SECRET_KEYS, ring, 'NODE_ENV unset (development)')
  t.equal(withDevWebhookSecretKeys({ NODE_ENV: 'development', WEBHOOK_SECRET_KEYS: '' }, file).WEBHOOK_SECRET_KEYS, ring, 'empty counts as unset')
  t.equal(withDevWebhookSecretKeys({ WEBHOOK_SECRET_KEYS: 'mine:x' }, file).WEBHOOK_SECRET_KEYS, 'mine:x', 'a ring given wins')
  t.equal(withDevWebhookSecretKeys({ NODE_ENV: 'production' }, file).WEBHOOK_SECRET_KEYS, undefined, 'production never falls back')
  t.equal(withDevWebhookSecretKeys({}, missing).WEBHOOK_SECRET_KEYS, undefined, 'no ring on disk: none')
  t.notOk(existsSync(missing), 'and none is made: a new ring would open nothing stored')

  writeFileSync(file, '  dev:abc,old:def \n')
  t.equal(withDevWebhookSecretKeys({}, file).WEBHOOK_SECRET_KEYS, 'dev:abc,old:def', 'read as the launcher reads it, trimmed')
})
