import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { localWebhookEnv } from '../../../services/launcher/local-webhooks.js'
import { consoleEnv, erasureEnv, gatewayEnv, loadConfig, pricingEnv, webhookSenderEnv } from '../../../shared/config.js'
import { TEST_SECRETS } from '../../helpers/db.js'
import { childEnv, projectRoot } from '../../helpers/processes.js'

t.test('a bad environment value stops start-up with a message naming it', async (t) => {
  const run = (service: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'services', service, 'main.js')], {
        cwd: projectRoot,
        env: childEnv({ LOG_LEVEL: 'silent', GATEWAY_PORT: '0', PRICING_PORT: '0', HOST: '127.0.0.1', ...TEST_SECRETS, ...env }),
      })
      let stderr = ''
      child.stderr.on('data', (chunk) => (stderr += chunk))
      // A process that accepted the value would listen forever: stop it so the test fails, not hangs
      // (late enough for nine processes loading at once on a busy two-core machine).
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.on('error', reject)
      child.on('close', (code) => {
        clearTimeout(timer)
        resolve({ code, stderr })
      })
    })

  const cases: [string, Record<string, string>, string][] = [
    ['gateway', { GATEWAY_PORT: 'notaport' }, 'GATEWAY_PORT'],
    ['gateway', { DATABASE_URL: 'nope' }, 'DATABASE_URL'],
    ['pricing', { GEOCODER: 'bogus' }, 'GEOCODER'],
    // Unset (empty counts as unset) or too short to be a secret: neither side of an internal call starts.
    ['gateway', { INTERNAL_TOKEN: '' }, 'INTERNAL_TOKEN'],
    ['pricing', { INTERNAL_TOKEN: 'short' }, 'INTERNAL_TOKEN'],
    // fastify would take it and fail deep in proxy-addr with a stack trace.
    ['gateway', { TRUST_PROXY: 'banana' }, 'TRUST_PROXY'],
    ['gateway', { TRUST_PROXY: '10.0.0.0/8, 10.0.0.1/33' }, 'TRUST_PROXY'],
    // The request bound would answer a slow placement's 503 first, without its placement_id.
    ['gateway', { REQUEST_TIMEOUT_MS: '1000', PLACEMENT_TIMEOUT_MS: '30000' }, 'PLACEMENT_TIMEOUT_MS'],
  ]
  await Promise.all(cases.map(async ([service, env, variable]) => {
    const { code, stderr } = await run(service, env)
    t.equal(code, 1, `${service} with ${JSON.stringify(env)} exits 1`)
    t.match(stderr, new RegExp(`^${service}: Invalid configuration: .*\\b${variable}\\b`), `stderr names ${variable}: ${stderr.trim()}`)
  }))

  // A HOST this machine has no address for: one line naming HOST, not getaddrinfo's alone.
  const { code, stderr } = await run('pricing', { HOST: 'no-such-host.invalid' })
  t.equal(code, 1, 'pricing with an unknown HOST exits 1')
  t.match(stderr.trim(), /^pricing: cannot listen on HOST no-such-host\.invalid: no address of this machine \(.+\)$/, stderr.trim())
})

t.test('production refuses placeholder, short and well-known secrets, and the webhook relaxations', async (t) => {
  const strong = randomBytes(32).toString('base64url')
  const production = (env: Record<string, string>) => ({ NODE_ENV: 'production', INTERNAL_TOKEN: strong, CONSOLE_SESSION_SECRET: strong, WEBHOOK_SECRET_KEYS: `k1:${randomBytes(32).toString('base64')}`, ...env })
  t.doesNotThrow(() => loadConfig(gatewayEnv, production({})), 'a random 32-byte token passes')
  t.doesNotThrow(() => loadConfig(consoleEnv, production({})), 'and a random session secret')
  const weak: [string, string][] = [
    ['CHANGE_ME_TO_32_RANDOM_CHARACTERS', 'placeholder'],
    ['CHANGE_ME_TO_48_RANDOM_BYTES_IN_BASE64_NOT_THIS', 'placeholder'],
    ['compose-dev-internal-token-change-me', 'placeholder'],
    ['changeme-changeme-changeme-changeme', 'placeholder'],
    ['my-very-long-password-for-production-1', 'well-known'],
    ['a-very-long-shared-secret-for-production', 'well-known'],
    ['k7Qz9vR2mXw4Lp8T', 'at least 32'],
    ['x'.repeat(48), 'repetitive'],
    ['abababababababababababababababababab', 'repetitive'],
  ]
  for (const [value, why] of weak) {
    t.throws(() => loadConfig(gatewayEnv, production({ INTERNAL_TOKEN: value })), new RegExp(`INTERNAL_TOKEN: .*${why}`), `INTERNAL_TOKEN ${value} is refused (${why})`)
    t.throws(() => loadConfig(consoleEnv, production({ CONSOLE_SESSION_SECRET: value })), /CONSOLE_SESSION_SECRET: /, `CONSOLE_SESSION_SECRET ${value} is refused`)
    t.doesNotThrow(() => loadConfig(gatewayEnv, { ...TEST_SECRETS, NODE_ENV: 'development', INTERNAL_TOKEN: value.padEnd(16, 'z') }), 'outside production the schema alone decides')
  }
  // Every value of the committed example file: a copy deployed unchanged must not start.
  const example = readFileSync(path.join(projectRoot, 'deploy/k8s/secrets.env.example'), 'utf8')
  const entries = example.split('\n').filter((line) => /^[A-Z_]+=/.test(line)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
  t.ok(entries.length >= 8, 'the example file has its keys')
  for (const [name, value] of entries) {
    // KEDA's address and password are read by KEDA, not by a service.
    if (name.startsWith('KEDA_')) continue
    const variable = name.startsWith('DATABASE_URL') ? 'DATABASE_URL' : name
    // Each secret where it is read: the console's, pricing's, the CLI's erase, else the gateway.
    const schema = name === 'CONSOLE_SESSION_SECRET' ? consoleEnv : name === 'QUOTE_SIGNING_KEY' ? pricingEnv : name === 'ERASURE_AUDIT_KEY' ? erasureEnv : gatewayEnv
    t.throws(() => loadConfig(schema, production({ [variable]: value })), new RegExp(`${variable}: `), `the example's ${name} is refused in production`)
  }
  t.throws(() => loadConfig(gatewayEnv, production({ DATABASE_URL: 'postgres://courier:courier@db:5432/courier' })), /DATABASE_URL: .*well-known password/, 'a well-known database password is refused')
  t.doesNotThrow(() => loadConfig(gatewayEnv, production({ DATABASE_URL: `postgres://courier_gateway:${strong}@db:5432/courier` })), 'a random one passes')
  for (const name of ['WEBHOOK_ALLOW_HTTP', 'WEBHOOK_ALLOW_PRIVATE']) {
    for (const schema of [gatewayEnv, consoleEnv, webhookSenderEnv]) {
      t.throws(() => loadConfig(schema, production({ [name]: 'true' })), new RegExp(`${name}: must be false when NODE_ENV=production`), `${name}=true is refused in production`)
    }
    t.equal((loadConfig(webhookSenderEnv, { ...TEST_SECRETS, NODE_ENV: 'development', [name]: 'true' }) as Record<string, unknown>)[name], true, `and allowed in development`)
  }
})

t.test('npm start relaxes webhook URLs on a laptop, never under NODE_ENV=production', async (t) => {
  t.same(localWebhookEnv('development', {}), { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' }, 'development: local http receivers work')
  t.same(localWebhookEnv('development', { WEBHOOK_ALLOW_HTTP: 'false' }).WEBHOOK_ALLOW_HTTP, 'false', 'an explicit value wins')
  t.same(localWebhookEnv('production', {}), {}, 'production: the strict defaults hold')
  const strong = randomBytes(32).toString('base64url')
  const ring = `k1:${randomBytes(32).toString('base64')}`
  t.doesNotThrow(() => loadConfig(webhookSenderEnv, { NODE_ENV: 'production', WEBHOOK_SECRET_KEYS: ring, ...localWebhookEnv('production', {}) }), 'so the sender starts under npm start in production')
  t.doesNotThrow(() => loadConfig(gatewayEnv, { NODE_ENV: 'production', INTERNAL_TOKEN: strong, WEBHOOK_SECRET_KEYS: ring, ...localWebhookEnv('production', {}) }), 'and the gateway')
})

t.test('pricing listens on this machine only unless HOST says otherwise', async (t) => {
  t.equal(loadConfig(pricingEnv, { ...TEST_SECRETS }).HOST, '127.0.0.1', 'pricing defaults to 127.0.0.1')
  t.equal(loadConfig(pricingEnv, { ...TEST_SECRETS, HOST: '0.0.0.0' }).HOST, '0.0.0.0', 'a container sets HOST=0.0.0.0')
  t.equal(loadConfig(gatewayEnv, { ...TEST_SECRETS }).HOST, '0.0.0.0', 'the gateway, the public door, keeps 0.0.0.0')
})

t.test("the console's address follows CONSOLE_PORT unless it is set, for every process that prints its links", async (t) => {
  t.equal(loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'a-console-session-secret-of-32-chars-or-more' }).CONSOLE_PUBLIC_URL, 'http://localhost:3004', 'the default port')
  t.equal(loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'a-console-session-secret-of-32-chars-or-more', CONSOLE_PORT: '5504' }).CONSOLE_PUBLIC_URL, 'http://localhost:5504', 'a moved port')
  t.equal(loadConfig(gatewayEnv, { ...TEST_SECRETS, CONSOLE_PORT: '5504' }).CONSOLE_PUBLIC_URL, 'http://localhost:5504', 'in a process that does not listen on it (the CLI, the worker) too')
  t.equal(loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'a-console-session-secret-of-32-chars-or-more', CONSOLE_PORT: '5504', CONSOLE_PUBLIC_URL: 'https://console.example.com/' }).CONSOLE_PUBLIC_URL, 'https://console.example.com', 'a set address wins')
  t.throws(() => loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'a-console-session-secret-of-32-chars-or-more', CONSOLE_PORT: 'abc' }), /CONSOLE_PORT/, 'a bad port is named as itself')
})
