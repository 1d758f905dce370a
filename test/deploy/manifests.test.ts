import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { QueueKeys } from 'bullmq'
import t, { type Test } from 'tap'
import { parse, parseAllDocuments } from 'yaml'
import type { z } from 'zod'
import { commonEnv, consoleEnv, dispatcherEnv, gatewayEnv, loadConfig, migrateEnv, pricingEnv, webhookSenderEnv, workerEnv } from '../../shared/config.js'
import { migrationsDir } from '../../shared/db/migrate.js'
import { DISPATCH_QUEUE, freeJob } from '../../shared/dispatch/queue.js'
import { PLACEMENT_QUEUE } from '../../shared/placement-queue.js'
import { WEBHOOK_QUEUE } from '../../shared/webhooks/queue.js'
import { checkWebhookUrl } from '../../shared/webhooks/url-rules.js'
import { demoRateCardPath } from '../../shared/accounts/demo-seed.js'
import { PHOTO_MAX_BYTES } from '../../shared/storage/photos.js'
import { TEST_SECRETS } from '../helpers/db.js'
import { projectRoot } from '../helpers/processes.js'

/*
 * The container and Kubernetes files cannot be run on a machine without Docker, so this reads
 * them and checks that everything they name is real: the commands are the npm scripts' own and
 * their files exist, every env var is one the process's config schema knows and its value
 * parses, every port is the one the service listens on, and the queue KEDA watches is the key
 * BullMQ writes.
 */

type Doc = Record<string, any>

const read = (relative: string) => readFileSync(path.join(projectRoot, relative), 'utf8')
const K8S_DIR = 'deploy/k8s'

// ---- what the project really has --------------------------------------------------------

const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts

interface Role {
  script: string
  schema: z.ZodObject
  /** Where its HTTP server listens (health probes) and its metrics ops port. */
  port?: number
  opsPort?: number
}

const defaults = {
  gateway: loadConfig(gatewayEnv, { ...TEST_SECRETS }),
  pricing: loadConfig(pricingEnv, { ...TEST_SECRETS }),
  worker: loadConfig(workerEnv, TEST_SECRETS),
  webhookSender: loadConfig(webhookSenderEnv, TEST_SECRETS),
  console: loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'x'.repeat(32) }),
  dispatcher: loadConfig(dispatcherEnv, TEST_SECRETS),
  common: loadConfig(commonEnv, {}),
}

const ROLES: Record<string, Role> = {
  gateway: { script: 'start:gateway', schema: gatewayEnv, port: defaults.gateway.GATEWAY_PORT, opsPort: defaults.gateway.GATEWAY_OPS_PORT },
  pricing: { script: 'start:pricing', schema: pricingEnv, port: defaults.pricing.PRICING_PORT, opsPort: defaults.pricing.PRICING_OPS_PORT },
  worker: { script: 'start:worker', schema: workerEnv, port: defaults.worker.WORKER_PORT, opsPort: defaults.worker.WORKER_OPS_PORT },
  'webhook-sender': { script: 'start:webhook-sender', schema: webhookSenderEnv, port: defaults.webhookSender.WEBHOOK_SENDER_PORT, opsPort: defaults.webhookSender.WEBHOOK_SENDER_OPS_PORT },
  console: { script: 'start:console', schema: consoleEnv, port: defaults.console.CONSOLE_PORT, opsPort: defaults.console.CONSOLE_OPS_PORT },
  dispatcher: { script: 'start:dispatcher', schema: dispatcherEnv, port: defaults.dispatcher.DISPATCHER_PORT, opsPort: defaults.dispatcher.DISPATCHER_OPS_PORT },
  migrate: { script: 'migrate', schema: migrateEnv },
  admin: { script: 'admin', schema: commonEnv },
}

const scriptTokens = (script: string) => {
  const line = scripts[script]
  if (line === undefined) throw new Error(`package.json has no script ${script}`)
  return line.trim().split(/\s+/)
}

/** Which role a container's command runs: it must be an npm script's command, word for word (admin may add arguments). */
function roleOf(command: string[]): string | undefined {
  for (const [name, role] of Object.entries(ROLES)) {
    const tokens = scriptTokens(role.script)
    const same = name === 'admin'
      ? command.length > tokens.length && tokens.every((token, i) => command[i] === token)
      : command.length === tokens.length && tokens.every((token, i) => command[i] === token)
    if (same) return name
  }
  return undefined
}

/** The longest `process.exit` delay in run-service.ts: how long a stopping service may take. */
const drainMs = (() => {
  const source = read('shared/http/run-service.ts')
  const match = /setTimeout\(\(\) => process\.exit\(1\), ([\d_]+)\)/.exec(source)
  if (!match) throw new Error('run-service.ts no longer has its forced-exit timer; update this test')
  return Number(match[1].replaceAll('_', ''))
})()

/** The long-running services, one Deployment, Service and compose service each. */
const SERVICES = ['console', 'dispatcher', 'gateway', 'pricing', 'webhook-sender', 'worker']
/** What people reach from outside: the API and the console. */
const PUBLIC = ['console', 'gateway']
/** The services that check webhook URLs (section 9): they read WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_PRIVATE. */
const URL_CHECKERS = ['console', 'gateway', 'webhook-sender']

const allowedEnv = (schema: z.ZodObject) => new Set(Object.keys(schema.shape))
const isOtel = (name: string) => name.startsWith('OTEL_')

const durationSeconds = (value: string | number) => {
  if (typeof value === 'number') return value
  const match = /^(\d+)(ms|s|m)$/.exec(value)
  if (!match) throw new Error(`unreadable duration ${value}`)
  return Number(match[1]) * ({ ms: 0.001, s: 1, m: 60 } as const)[match[2] as 'ms' | 's' | 'm']
}

/**
 * A compose environment as compose hands it to the container when the host sets none of the
 * variables it names: `${NAME:-default}` and `${NAME-default}` become the default, `${NAME}` empty.
 */
const composeEnv = (env: Record<string, unknown> = {}): Record<string, string> =>
  Object.fromEntries(Object.entries(env).map(([name, value]) => [name, String(value).replace(/\$\{[A-Za-z_][A-Za-z0-9_]*(?::?-([^}]*))?\}/g, (_match, fallback: string | undefined) => fallback ?? '')]))

/** Every TypeScript file under a folder of the project: its path and its text. */
const tsFiles = (dir: string): Array<[string, string]> => readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((entry): Array<[string, string]> =>
  entry.isDirectory() ? tsFiles(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [[`${dir}/${entry.name}`, read(`${dir}/${entry.name}`)]] : [])
const tsSources = (dir: string): string[] => tsFiles(dir).map(([, source]) => source)

/** Whether a role's process opens the photo store: its service folder (from its npm script's entry file) calls createPhotoStore. */
const opensPhotoStore = (role: string) => {
  const entry = scriptTokens(ROLES[role]!.script).find((token) => /^dist\/services\/.+\/main\.js$/.test(token))
  return entry !== undefined && tsSources(path.posix.dirname(entry.replace(/^dist\//, ''))).some((source) => source.includes('createPhotoStore('))
}

/**
 * Every path the console's own code registers a route on (`app.get('/…'`) or sends a browser to
 * (`redirect('/…')`), from its sources: the health routes come from shared/http/health.ts and
 * stay off the Ingress.
 */
function consoleRoutePaths(): string[] {
  const code = tsSources('services/console').join('\n')
  const routes = [...code.matchAll(/\.(?:get|post|put|patch|delete|all)\s*(?:<[^\n]*?>)?\(\s*['`](\/[^'`]*)['`]/g)].map((m) => m[1]!)
  const redirects = [...code.matchAll(/\.redirect\(\s*['`](\/[^'`?$]*)/g)].map((m) => m[1]!)
  return [...new Set([...routes, ...redirects])].sort()
}

// ---- the files under test --------------------------------------------------------------

const compose = parse(read('docker-compose.yml'), { merge: true }) as Doc
// kustomize's own configuration files (`configurations:`) are not resources.
const kustomizeConfigs = new Set<string>((parse(read(`${K8S_DIR}/kustomization.yaml`)) as Doc).configurations ?? [])
const k8sFiles = readdirSync(path.join(projectRoot, K8S_DIR)).filter((name) => /\.ya?ml$/.test(name) && !kustomizeConfigs.has(name)).sort()
const k8sDocs: Array<Doc & { file: string }> = k8sFiles.flatMap((file) =>
  parseAllDocuments(read(`${K8S_DIR}/${file}`))
    .map((document) => {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0].message}`)
      return document.toJSON() as Doc | null
    })
    .filter((doc): doc is Doc => doc !== null)
    .map((doc) => ({ ...doc, file })),
)
/** KEY=VALUE lines of a secretGenerator env file. */
const envFile = (relative: string) => read(relative).split('\n').filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
/** A value as an operator would put it in secrets.env: each placeholder becomes random. */
const realValue = (value: string) => value.replaceAll('CHANGE_ME_TO_32_RANDOM_BYTES_IN_BASE64', randomBytes(32).toString('base64url')).replaceAll('CHANGE_ME', randomBytes(24).toString('hex'))
/** The Secrets kustomize generates from the (uncommitted) env files, as their example files describe them. */
const generatedSecrets: Array<Doc & { file: string }> = ((parse(read(`${K8S_DIR}/kustomization.yaml`)) as Doc).secretGenerator ?? []).map((generator: Doc) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: generator.name, namespace: 'courier' },
  stringData: Object.fromEntries((generator.envs ?? []).flatMap((file: string) => envFile(`${K8S_DIR}/${file}.example`).map(([key, value]) => [key, realValue(value)]))),
  file: 'kustomization.yaml',
  generated: true,
}))
k8sDocs.push(...generatedSecrets)
const ofKind = (kind: string) => k8sDocs.filter((doc) => doc.kind === kind)
/** One-shot workloads: the Jobs, and each CronJob's job (its `spec.template` is the pod the schedule runs). */
const oneShots = (): Array<Doc & { file: string }> => [...ofKind('Job'), ...ofKind('CronJob').map((cron) => ({ ...cron, spec: cron.spec.jobTemplate.spec }))]
const named = (kind: string, name: string) => ofKind(kind).find((doc) => doc.metadata?.name === name)
// Instructions only: comments may mention what the instructions must not do.
const dockerfile = read('deploy/Dockerfile').split('\n').filter((line) => !line.trimStart().startsWith('#')).join('\n')

/** Every file of the project a command names: its compiled JS after the build, and its TypeScript source. */
function checkCommandFiles(t: Test, command: string[], where: string) {
  const files = command.filter((token) => /\.m?js$/.test(token)).map((token) => token.replace(/^\.\//, ''))
  t.ok(files.length > 0, `${where}: the command names a JavaScript entry file`)
  for (const file of files) {
    t.match(file, /^dist\//, `${where}: ${file} is a built file under dist/`)
    const source = file.replace(/^dist\//, '').replace(/\.js$/, '.ts')
    t.ok(/^(services|shared)\//.test(source) && existsSync(path.join(projectRoot, source)), `${where}: the source ${source} exists`)
    // `npm test` builds first. Without dist/ (tap run by hand), or without the file's folder in it
    // (a service written while this test runs against an older build), only the source is checked.
    if (existsSync(path.join(projectRoot, path.dirname(file)))) t.ok(existsSync(path.join(projectRoot, file)), `${where}: ${file} exists after npm run build`)
  }
}

/**
 * Env var names are the schema's own (or OTEL_*), and the whole environment passes the service's
 * config validation. `shared` names come from a ConfigMap every process takes; a service may
 * ignore some of them (the 'shared ConfigMap' test checks each is read by some service).
 */
function checkEnv(t: Test, env: Record<string, string>, role: Role, where: string, shared: ReadonlySet<string> = new Set()) {
  const known = allowedEnv(role.schema)
  for (const name of Object.keys(env)) {
    if (shared.has(name) && !known.has(name)) continue
    t.ok(known.has(name) || isOtel(name), `${where}: ${name} is read by the ${role.script} process (shared/config.ts)`)
  }
  t.doesNotThrow(() => loadConfig(role.schema, env), `${where}: its environment passes config validation`)
  t.equal(env.QUEUE_PREFIX ?? defaults.common.QUEUE_PREFIX, defaults.common.QUEUE_PREFIX, `${where}: the queue prefix is the default one KEDA watches`)
}

/** Pod Security Admission's restricted profile, and no service-account token in the pod. */
function checkPodSecurity(t: Test, pod: Doc, container: Doc) {
  t.equal(pod.automountServiceAccountToken, false, 'no service-account token is mounted')
  t.ok(pod.securityContext?.runAsNonRoot || container.securityContext?.runAsNonRoot, 'runs as non-root')
  t.equal(pod.securityContext?.seccompProfile?.type ?? container.securityContext?.seccompProfile?.type, 'RuntimeDefault', 'RuntimeDefault seccomp')
  t.equal(container.securityContext?.allowPrivilegeEscalation, false, 'no privilege escalation')
  t.same(container.securityContext?.capabilities?.drop, ['ALL'], 'drops every capability')
  t.notOk(container.securityContext?.capabilities?.add, 'adds none')
  t.equal(container.securityContext?.readOnlyRootFilesystem, true, 'read-only root filesystem')
  t.notOk(container.securityContext?.privileged || pod.hostNetwork || pod.hostPID || pod.hostIPC, 'nothing of the host')
}

// ---- the Dockerfile ------------------------------------------------------------------

t.test('Dockerfile', async (t) => {
  const stages = [...dockerfile.matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)].map((m) => ({ image: m[1], name: m[2] }))
  t.ok(stages.length >= 2, 'multi-stage')
  // Node 24 LTS, a pinned release (optionally with its digest), never a moving tag.
  t.match(dockerfile, /^ARG NODE_IMAGE=node:24\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/m, 'based on a pinned node:24.x.y-bookworm-slim')
  t.notMatch(dockerfile, /node:(latest|lts|current)\b/, 'no moving Node tag')
  t.notMatch(dockerfile, /npm ci\b/, 'no npm ci (the lockfile lacks optional platform packages)')
  t.match(dockerfile, /npm install\b/, 'installs with npm install')
  t.match(dockerfile, /npm run build/, 'builds')
  t.ok(stages.every((stage) => stage.image === '${NODE_IMAGE}'), 'every stage is the one pinned Node image')
  // The runtime's node_modules: a production install, without scripts (the postinstall compiles,
  // which needs the dev dependency typescript; the runtime takes dist/ from the build stage).
  const depsStage = /^FROM \S+ AS deps$([\s\S]*?)(?=^FROM )/m.exec(dockerfile)?.[1] ?? ''
  t.match(depsStage, /npm install --omit=dev --ignore-scripts/, 'a deps stage installs production dependencies only, scripts skipped')
  const buildStage = /^FROM \S+ AS build$([\s\S]*?)(?=^FROM )/m.exec(dockerfile)?.[1] ?? ''
  // The patches npm install applies (the postinstall), applied in the build stage, which skips
  // scripts; the deps stage takes each patched package from there: the image runs the same
  // patched driver as the tests.
  t.match(read('package.json'), /"postinstall": "patch-package --patch-dir deploy\/patches --error-on-fail && /, 'npm install applies deploy/patches')
  t.match(buildStage, /^COPY deploy\/patches \.\/deploy\/patches$[\s\S]*npx patch-package --patch-dir deploy\/patches --error-on-fail/m, 'the build stage applies deploy/patches')
  for (const patch of readdirSync(path.join(projectRoot, 'deploy/patches'))) {
    const name = /^(.+)\+[^+]+\.patch$/.exec(patch)?.[1]?.replace('+', '/')
    t.ok(name && depsStage.includes(`COPY --from=build /app/node_modules/${name} ./node_modules/${name}\n`), `the deps stage takes ${name}, patched, from the build stage`)
  }
  const buildConfig = /"build": "tsc -p (\S+)"/.exec(read('package.json'))?.[1]
  t.ok(buildStage.split('\n').some((line) => line.startsWith('COPY ') && line.split(/\s+/).includes(buildConfig ?? '')), `the build stage copies ${buildConfig}, which npm run build compiles with`)

  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
  t.match(runtime, /^USER node$/m, 'runs as the node user')
  t.match(runtime, /apt-get install[^\n]*\btini\b/, 'installs tini')
  const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(runtime)?.[1] ?? '[]') as string[]
  t.equal(entrypoint[0], '/usr/bin/tini', 'tini is the entrypoint')
  t.equal(entrypoint.at(-1), '--', 'tini passes the command through')
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(runtime)?.[1] ?? '[]') as string[]
  t.equal(roleOf(cmd), 'gateway', 'the default command is npm start:gateway\'s command')
  t.notOk(cmd.includes('npm'), 'services are not started through npm')

  const workdir = /^WORKDIR (\S+)$/m.exec(runtime)?.[1]
  t.ok(workdir, 'the runtime has a WORKDIR')
  // Each COPY's sources and where they land, as absolute paths in the image.
  const copies = [...runtime.matchAll(/^COPY ((?:--\S+ )*)(.+)$/gm)].flatMap((m) => {
    const words = m[2].trim().split(/\s+/)
    const dest = words.pop()!
    const intoDir = words.length > 1 || dest.endsWith('/') || dest === '.'
    return words.map((src) => ({
      from: /--from=(\S+)/.exec(m[1])?.[1],
      src: src.replace(/^\/app\//, ''),
      dest: path.posix.normalize(path.posix.join(workdir!, dest, intoDir ? path.posix.basename(src) : '')).replace(/\/$/, ''),
    }))
  })
  const copied = (dest: string) => copies.find((c) => c.dest === dest)
  t.equal(copied(path.posix.join(workdir!, 'dist'))?.from, 'build', 'the runtime gets dist from the build stage')
  for (const needed of ['node_modules', 'package.json']) {
    t.equal(copied(path.posix.join(workdir!, needed))?.from, 'deps', `the runtime gets ${needed} from the production-only deps stage`)
  }
  // Read at run time from the project root: the image must put them where the code looks.
  for (const [what, absolute] of [['migrations', migrationsDir], ['demo rate card', demoRateCardPath]] as const) {
    const relative = path.relative(projectRoot, absolute).split(path.sep).join('/')
    t.ok(existsSync(absolute), `${what} exist at ${relative}`)
    const copy = copied(path.posix.join(workdir!, relative))
    t.ok(copy, `the runtime copies the ${what} to ${workdir}/${relative}`)
    t.equal(copy?.src, relative, `from the same path in the build context`)
  }

  const healthcheck = /^HEALTHCHECK[^\n]*(?:\\\n[^\n]*)*CMD (\[.*\])$/m.exec(runtime)
  t.ok(healthcheck, 'has a HEALTHCHECK')
  const script = (JSON.parse(healthcheck?.[1] ?? '[]') as string[]).find((token) => token.endsWith('.mjs'))
  t.ok(script && existsSync(path.join(projectRoot, script)), `the health check script ${script} exists`)
  t.ok(script && copied(path.posix.join(workdir!, script)), 'and is copied into the image')
  const healthSource = script ? read(script) : ''
  const healthPorts = {
    GATEWAY_PORT: defaults.gateway.GATEWAY_PORT,
    PRICING_PORT: defaults.pricing.PRICING_PORT,
    WORKER_PORT: defaults.worker.WORKER_PORT,
    WEBHOOK_SENDER_PORT: defaults.webhookSender.WEBHOOK_SENDER_PORT,
    CONSOLE_PORT: defaults.console.CONSOLE_PORT,
    DISPATCHER_PORT: defaults.dispatcher.DISPATCHER_PORT,
  }
  for (const [name, port] of Object.entries(healthPorts)) {
    t.match(healthSource, `process.env.${name} || '${port}'`, `the health check knows ${name} and its default ${port}`)
  }
  t.match(healthSource, '/healthz', 'the health check asks /healthz')

  const ignored = read('.dockerignore').split('\n').map((line) => line.trim())
  for (const entry of ['node_modules', 'dist', '.git']) t.ok(ignored.includes(entry), `.dockerignore leaves out ${entry}`)
})

// ---- deploy/README.md -------------------------------------------------------------------

t.test('deploy/README.md: its process table and its probes say what the scripts and services do', async (t) => {
  const readme = read('deploy/README.md')
  const rows = [...readme.matchAll(/^\| ([^|`]+?) \| `([^`]+)`/gm)].map((m) => ({ name: m[1]!.replace(' (one-shot)', '').replace(' ', '-'), command: m[2]! }))
  const roleOfRow = (name: string) => (name === 'operator-CLI' ? 'admin' : name)
  t.same(rows.map((row) => roleOfRow(row.name)).sort(), Object.keys(ROLES).sort(), 'a row per process')
  for (const row of rows) {
    const role = roleOfRow(row.name)
    const script = scripts[ROLES[role]?.script ?? '']
    if (role === 'admin') t.equal(row.command, `${script} <command>`, `${row.name}: the table shows npm run admin's command`)
    else t.equal(row.command, script, `${row.name}: the table shows npm run ${ROLES[role]?.script}'s command, word for word`)
  }
  for (const [, script] of readme.matchAll(/Until\s+package\.json\s+has\s+an?\s+`([^`]+)`\s+script/g)) t.notOk(scripts[script!], `no note waits for the ${script} script, which exists`)

  // Which services' readiness needs Redis, from their own health registration.
  const needsRedis = new Map(SERVICES.map((role) => {
    const entry = scriptTokens(ROLES[role]!.script).find((token) => /^dist\/services\/.+\/main\.js$/.test(token))!
    const flags = tsSources(path.posix.dirname(entry.replace(/^dist\//, ''))).join('\n').match(/needsRedis: (true|false)/g) ?? []
    t.equal(flags.length, 1, `${role} registers its health routes once, saying whether it needs Redis`)
    return [role, flags[0] === 'needsRedis: true'] as const
  }))
  const probes = /^- Probes:[\s\S]*?(?=^- )/m.exec(readme)?.[0].replace(/\s+/g, ' ') ?? ''
  t.notMatch(probes, /Postgres and Redis reachable/, 'the probes bullet does not say every service needs Redis')
  const redisList = /Redis only for ([^(.]+)/.exec(probes)?.[1] ?? ''
  for (const [role, needs] of needsRedis) {
    const name = role.replace('-', ' ')
    t.equal(new RegExp(`\\b${name}\\b`).test(redisList), needs, `the probes bullet ${needs ? 'lists' : 'does not list'} the ${name} among the services whose readiness needs Redis`)
    t.match(probes, new RegExp(`\\b${name}\\b`), `and names the ${name}`)
  }
})

t.test('runtime dependencies: only what the services import, no compiler', async (t) => {
  const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string>; devDependencies: Record<string, string>; engines: { node: string } }
  for (const tool of ['typescript', '@types/node']) {
    t.notOk(tool in pkg.dependencies, `${tool} is not a runtime dependency`)
    t.ok(tool in pkg.devDependencies, `${tool} is a dev dependency (the build stage compiles)`)
  }
  const sources = (dir: string): string[] => readdirSync(path.join(projectRoot, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(`${dir}/${entry.name}`) : entry.name.endsWith('.ts') ? [read(`${dir}/${entry.name}`)] : [])
  const code = [...sources('services'), ...sources('shared')].join('\n')
  const imported = new Set([...code.matchAll(/(?:from\s+|import\(|register\()\s*'([^'.][^']*)'/g)].map((m) => m[1].startsWith('@') ? m[1].split('/').slice(0, 2).join('/') : m[1].split('/')[0]))
  for (const name of Object.keys(pkg.dependencies)) t.ok(imported.has(name), `${name} is imported by services/ or shared/`)
  // Both Node 20 (this machine) and Node 24 (the image) run the code.
  const minimum = /^>=\s*(\d+)(?:\.\d+){0,2}$/.exec(pkg.engines.node)
  t.ok(minimum && Number(minimum[1]) <= 20, `engines.node ${pkg.engines.node} admits Node 20 and 24`)
  t.equal(read('.nvmrc').trim(), '24', '.nvmrc recommends Node 24')
})

t.test('one copy of each OpenTelemetry package: the lockfile installs none twice', async (t) => {
  // OpenTelemetry's packages name each other's exact versions: a range in package.json can
  // install a newer one beside the set sdk-node names, and every service then loads both.
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string }> }
  const versions = new Map<string, Set<string>>()
  for (const [where, entry] of Object.entries(lock.packages)) {
    const name = /(?:^|\/)node_modules\/(@opentelemetry\/[^/]+)$/.exec(where)?.[1]
    if (name && entry.version) versions.set(name, (versions.get(name) ?? new Set()).add(entry.version))
  }
  t.ok(versions.has('@opentelemetry/core'), `${versions.size} OpenTelemetry packages in the lockfile`)
  const twice = [...versions].filter(([, found]) => found.size > 1).map(([name, found]) => `${name} ${[...found].join(', ')}`)
  t.same(twice, [], 'no package in two versions')
})

// ---- docker-compose.yml ----------------------------------------------------------------

t.test('docker-compose.yml', async (t) => {
  const services = compose.services as Record<string, Doc>
  const appServices = Object.entries(services).filter(([, service]) => service.build !== undefined || service.image === services.gateway?.image)
  const roles = new Map<string, string>()

  for (const [name, service] of appServices) {
    t.test(`service ${name}`, async (t) => {
      t.equal(service.image, services.gateway.image, 'the one project image')
      t.ok(service.build, 'builds it')
      const context = path.join(projectRoot, service.build.context)
      t.ok(existsSync(path.join(context, service.build.dockerfile)), `its Dockerfile ${service.build.dockerfile} exists`)
      t.equal(path.resolve(context), projectRoot, 'the build context is the repository root')
      t.notOk(service.container_name, 'no fixed container_name (scalable)')

      const command = service.command as string[]
      t.ok(Array.isArray(command), 'the command is an exec-form list')
      const role = roleOf(command)
      t.ok(role, `runs an npm script's own command: ${command.join(' ')}`)
      if (!role) return
      roles.set(name, role)
      checkCommandFiles(t, command, name)
      checkEnv(t, composeEnv(service.environment), ROLES[role], name)

      const { port, opsPort } = ROLES[role]
      const published = (service.ports ?? []).map((spec: string) => Number(String(spec).split(':').at(-1)))
      const exposed = (service.expose ?? []).map(Number)
      for (const containerPort of [...published, ...exposed]) {
        t.ok(containerPort === port || containerPort === opsPort, `port ${containerPort} is the ${role} service port ${port} or ops port ${opsPort}`)
      }
      if (!PUBLIC.includes(role)) t.same(service.ports ?? [], [], 'publishes no host port, so --scale works')
      if (port !== undefined) {
        t.ok([...published, ...exposed].includes(port), `offers its service port ${port}`)
        t.ok([...published, ...exposed].includes(opsPort!), `offers its ops port ${opsPort}`)
        t.notOk(service.healthcheck?.disable, 'keeps the image health check')
        t.ok(durationSeconds(service.stop_grace_period ?? '10s') * 1000 > drainMs, `stop_grace_period outlasts the ${drainMs} ms drain`)
      } else {
        t.equal(service.restart, 'no', 'a one-shot is not restarted')
      }
      const otlp = service.environment?.OTEL_EXPORTER_OTLP_ENDPOINT
      if (port !== undefined) {
        t.ok(otlp, 'sends traces')
        const url = new URL(otlp)
        t.ok(services[url.hostname], `to the compose service ${url.hostname}`)
        t.ok((services[url.hostname]?.expose ?? []).map(String).includes(url.port), `which exposes ${url.port}`)
      }
    })
  }

  t.test('wiring', async (t) => {
    const byRole = (role: string) => [...roles].filter(([, r]) => r === role).map(([name]) => name)
    for (const role of [...SERVICES, 'migrate', 'admin']) t.equal(byRole(role).length, 1, `one service runs ${role}`)
    const [gateway] = byRole('gateway')
    const [pricing] = byRole('pricing')
    const [migrate] = byRole('migrate')
    const [seed] = byRole('admin')
    t.same(services[seed].command.slice(scriptTokens('admin').length), ['demo:seed'], 'the seed service runs demo:seed')
    t.same(services[gateway].ports, [`${defaults.gateway.GATEWAY_PORT}:${defaults.gateway.GATEWAY_PORT}`], 'the gateway publishes its port')
    const [consoleService] = byRole('console')
    t.same(services[consoleService].ports, [`${defaults.console.CONSOLE_PORT}:${defaults.console.CONSOLE_PORT}`], 'the console publishes its port')
    const composeConsole = loadConfig(consoleEnv, composeEnv(services[consoleService].environment))
    t.equal(composeConsole.CONSOLE_PUBLIC_URL, `http://localhost:${defaults.console.CONSOLE_PORT}`, 'its links point at the published port')
    const pricingUrl = new URL(services[gateway].environment.PRICING_URL)
    t.equal(pricingUrl.hostname, pricing, 'PRICING_URL names the pricing service')
    t.equal(Number(pricingUrl.port), defaults.pricing.PRICING_PORT, 'on the pricing port')
    t.equal(services[gateway].depends_on?.[migrate]?.condition, 'service_completed_successfully', 'the gateway waits for migrations')
    t.equal(services[gateway].depends_on?.[pricing]?.condition, 'service_healthy', 'and for a healthy pricing service')
    t.equal(services[seed].depends_on?.[migrate]?.condition, 'service_completed_successfully', 'the seed runs after migrations')
    for (const name of [...byRole('pricing'), ...byRole('worker'), ...byRole('webhook-sender'), ...byRole('console'), ...byRole('dispatcher')]) {
      t.equal(services[name].depends_on?.[migrate]?.condition, 'service_completed_successfully', `${name} waits for migrations`)
    }
    // Compose is the laptop stack: development, so its published passwords and the webhook
    // relaxations are accepted; production config would refuse them.
    t.equal(services[gateway].environment.NODE_ENV, 'development', 'compose runs NODE_ENV=development')
    t.equal(loadConfig(pricingEnv, composeEnv({ ...services[pricing].environment })).HOST, '0.0.0.0', 'pricing listens on the compose network (HOST=0.0.0.0; its default is 127.0.0.1)')
    t.throws(() => loadConfig(gatewayEnv, { ...composeEnv(services[gateway].environment), NODE_ENV: 'production' }), /INTERNAL_TOKEN: .*placeholder/, 'its development token would not start in production')
    const [sender] = byRole('webhook-sender')
    t.equal(sender, 'webhook-sender', 'the compose service is called webhook-sender')
    t.same(services[sender].ports ?? [], [], 'the sender publishes no host port, so --scale webhook-sender=N works')
    const [dispatcher] = byRole('dispatcher')
    t.equal(dispatcher, 'dispatcher', 'the compose service is called dispatcher')
    t.same(services[dispatcher].ports ?? [], [], 'the dispatcher publishes no host port, so --scale dispatcher=N works')
    // On a laptop receivers are often http:// and private (as under npm start); the host may override.
    for (const role of URL_CHECKERS) {
      const [name] = byRole(role)
      const config = loadConfig(ROLES[role].schema, composeEnv(services[name].environment)) as Record<string, unknown>
      t.equal(config.WEBHOOK_ALLOW_HTTP, true, `${name}: WEBHOOK_ALLOW_HTTP defaults to true under compose`)
      t.equal(config.WEBHOOK_ALLOW_PRIVATE, true, `${name}: WEBHOOK_ALLOW_PRIVATE defaults to true under compose`)
      t.equal(services[name].environment.WEBHOOK_ALLOW_HTTP, '${WEBHOOK_ALLOW_HTTP:-true}', `${name}: and the host's WEBHOOK_ALLOW_HTTP wins`)
      t.equal(services[name].environment.WEBHOOK_ALLOW_PRIVATE, '${WEBHOOK_ALLOW_PRIVATE:-true}', `${name}: and the host's WEBHOOK_ALLOW_PRIVATE wins`)
    }

    const database = new URL(services[gateway].environment.DATABASE_URL)
    t.ok(services[database.hostname], `DATABASE_URL names the compose service ${database.hostname}`)
    t.equal(decodeURIComponent(database.username), services[database.hostname].environment.POSTGRES_USER, 'with its user')
    t.equal(decodeURIComponent(database.password), services[database.hostname].environment.POSTGRES_PASSWORD, 'and password')
    t.ok(services[database.hostname].healthcheck?.test, 'postgres has a health check')
    t.ok(services[database.hostname].volumes?.length, 'and a volume')
    const redis = new URL(services[gateway].environment.REDIS_URL)
    t.ok(services[redis.hostname], `REDIS_URL names the compose service ${redis.hostname}`)
    t.ok(services[redis.hostname].healthcheck?.test, 'redis has a health check')
    for (const name of [...byRole('worker'), ...byRole('webhook-sender'), ...byRole('dispatcher')]) {
      t.equal(services[name].depends_on?.[redis.hostname]?.condition, 'service_healthy', `${name} waits for a healthy Redis (its queue)`)
    }
    t.ok(services[redis.hostname].volumes?.length, 'and a volume')
    for (const volume of [...services[database.hostname].volumes, ...services[redis.hostname].volumes]) {
      const source = String(volume).split(':')[0]
      t.ok(Object.hasOwn(compose.volumes ?? {}, source), `volume ${source} is declared`)
    }
  })
})

// ---- Kubernetes -------------------------------------------------------------------------

t.test('deploy/k8s', async (t) => {
  t.test('every document', async (t) => {
    t.ok(k8sDocs.length > 0, 'manifests were read')
    for (const doc of k8sDocs) {
      const where = `${doc.file}: ${doc.kind}/${doc.metadata?.name}`
      t.ok(doc.apiVersion && doc.kind, `${where} has apiVersion and kind`)
      if (doc.kind === 'Kustomization') continue
      t.ok(doc.metadata?.name, `${where} has a name`)
      if (doc.kind !== 'Namespace') t.equal(doc.metadata?.namespace, 'courier', `${where} is in the courier namespace`)
    }
    const kustomization = ofKind('Kustomization')[0]
    t.ok(kustomization, 'kustomization.yaml exists')
    t.same([...(kustomization?.resources ?? [])].sort(), k8sFiles.filter((file) => kustomization?.file !== file), 'kustomization lists every manifest')
    t.equal(kustomization?.namespace, 'courier', 'kustomization sets the namespace')
    t.ok(named('Namespace', 'courier'), 'the namespace is created')
  })

  t.test('only the gateway reaches pricing', async (t) => {
    const policy = named('NetworkPolicy', 'pricing')
    t.same(policy?.spec?.podSelector?.matchLabels, { 'app.kubernetes.io/name': 'pricing' }, 'the policy selects the pricing pods')
    const apiRule = policy?.spec?.ingress?.find((rule: any) => rule.ports?.some((p: any) => p.port === 'http'))
    const callers = (apiRule?.from ?? []).map((peer: any) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name']).sort()
    t.same(callers, ['gateway'], 'the API port admits the gateway only (the worker prices in process)')
  })

  t.test('the gateway and pricing share one internal token, and no other pod sees it', async (t) => {
    const tokenRef = (name: string) => named('Deployment', name)?.spec.template.spec.containers[0].env?.find((entry: Doc) => entry.name === 'INTERNAL_TOKEN')?.valueFrom?.secretKeyRef
    t.same(tokenRef('gateway'), { name: 'courier-secrets', key: 'INTERNAL_TOKEN' }, 'the gateway reads it by key from the generated Secret')
    t.same(tokenRef('pricing'), tokenRef('gateway'), 'pricing reads the same key')
    t.notOk(tokenRef('worker'), 'the worker does not get it')
    t.notOk(tokenRef('webhook-sender'), 'nor does the webhook sender')
    t.notOk(tokenRef('console'), 'nor does the console')
    t.notOk(tokenRef('dispatcher'), 'nor does the dispatcher')
    const envFromSecrets = [...ofKind('Deployment'), ...oneShots()].flatMap((d) => d.spec.template.spec.containers[0].envFrom ?? []).filter((source: Doc) => source.secretRef)
    t.same(envFromSecrets, [], 'no pod takes a whole Secret: each reads only its own keys')
  })

  const workloads = [...ofKind('Deployment'), ...oneShots()]
  const images = new Set<string>()
  const deploymentOf = new Map<string, Doc>()
  /** The environment each Deployment's process sees, by role. */
  const effectiveEnv = new Map<string, Record<string, string>>()

  for (const workload of workloads) {
    const pod = workload.spec.template
    for (const container of pod.spec.containers as Doc[]) {
      t.test(`${workload.kind}/${workload.metadata.name} container ${container.name}`, async (t) => {
        images.add(container.image)
        t.notOk(container.command, 'uses args, not command, so tini stays the entrypoint')
        const command = [...(container.command ?? []), ...(container.args ?? [])] as string[]
        const role = roleOf(command)
        t.ok(role, `runs an npm script's own command: ${command.join(' ')}`)
        if (!role) return
        if (workload.kind === 'Deployment') deploymentOf.set(role, workload)
        checkCommandFiles(t, command, `${workload.metadata.name}`)

        // The environment the process sees: envFrom sources, then env entries.
        const env: Record<string, string> = {}
        const shared = new Set<string>()
        for (const source of container.envFrom ?? []) {
          const ref = source.configMapRef ?? source.secretRef
          const kind = source.configMapRef ? 'ConfigMap' : 'Secret'
          const doc = named(kind, ref?.name)
          t.ok(doc, `envFrom ${kind} ${ref?.name} is defined`)
          Object.assign(env, doc?.data ?? {}, doc?.stringData ?? {})
          if (kind === 'ConfigMap') for (const name of Object.keys(doc?.data ?? {})) shared.add(name)
        }
        for (const entry of container.env ?? []) {
          const fromSecret = entry.valueFrom?.secretKeyRef
          if (fromSecret) {
            const value = named('Secret', fromSecret.name)?.stringData?.[fromSecret.key]
            // An optional key left out of secrets.env leaves the variable unset.
            if (fromSecret.optional === true && value === undefined) continue
            t.type(value, 'string', `env ${entry.name} comes from Secret ${fromSecret.name} key ${fromSecret.key}`)
            env[entry.name] = value
            continue
          }
          t.type(entry.value, 'string', `env ${entry.name} has a literal value`)
          env[entry.name] = entry.value
        }
        checkEnv(t, env, ROLES[role], `${workload.metadata.name}`, shared)
        if (workload.kind === 'Deployment') effectiveEnv.set(role, env)
        const { port, opsPort } = ROLES[role]
        t.ok(env.DATABASE_URL, 'DATABASE_URL is set')
        if (port !== undefined) t.ok(env.REDIS_URL, 'REDIS_URL is set (the migration needs none)')
        checkPodSecurity(t, pod.spec, container)
        const ports = new Map<string, number>((container.ports ?? []).map((p: Doc) => [p.name, p.containerPort]))
        if (port === undefined) {
          t.equal(ports.size, 0, 'a one-shot opens no port')
          t.ok(['OnFailure', 'Never'].includes(pod.spec.restartPolicy), 'a Job pod does not restart forever')
          return
        }
        t.same([...ports.values()].sort(), [port, opsPort].sort(), `container ports are the service port ${port} and ops port ${opsPort}`)
        const resolve = (value: string | number) => (typeof value === 'number' ? value : ports.get(value))
        t.equal(container.readinessProbe?.httpGet?.path, '/readyz', 'readiness asks /readyz')
        t.equal(container.livenessProbe?.httpGet?.path, '/healthz', 'liveness asks /healthz')
        t.equal(resolve(container.readinessProbe?.httpGet?.port), port, `readiness probe on port ${port}`)
        t.equal(resolve(container.livenessProbe?.httpGet?.port), port, `liveness probe on port ${port}`)
        const annotations = pod.metadata?.annotations ?? {}
        t.equal(annotations['prometheus.io/scrape'], 'true', 'scraped by Prometheus')
        t.equal(Number(annotations['prometheus.io/port']), opsPort, `on the ops port ${opsPort}`)
        t.equal(annotations['prometheus.io/path'], '/metrics', 'at /metrics')
        t.ok(container.resources?.requests?.cpu && container.resources?.requests?.memory, 'requests cpu and memory')
        t.ok(container.resources?.limits?.memory, 'limits memory')
        t.ok(pod.spec.terminationGracePeriodSeconds * 1000 > drainMs + (container.lifecycle?.preStop ? 5000 : 0), `terminationGracePeriodSeconds outlasts the ${drainMs} ms drain`)
        t.ok(pod.spec.securityContext?.runAsNonRoot, 'runs as non-root')
        const selector = workload.spec.selector.matchLabels as Record<string, string>
        t.ok(Object.entries(selector).every(([k, v]) => pod.metadata.labels?.[k] === v), 'the selector matches the pod labels')
      })
    }
  }

  t.test('one image, and the right workloads', async (t) => {
    t.equal(images.size, 1, `the Deployments and the Job use one image: ${[...images].join(', ')}`)
    const [image] = images
    const kustomization = ofKind('Kustomization')[0]
    t.ok((kustomization?.images ?? []).some((entry: Doc) => entry.name === image?.split(':')[0]), 'kustomization can retarget that image')
    t.same([...deploymentOf.keys()].sort(), SERVICES, 'one Deployment per service')
    t.equal(deploymentOf.get('webhook-sender')?.metadata.name, 'webhook-sender', 'the sender Deployment is webhook-sender')
    t.equal(deploymentOf.get('dispatcher')?.metadata.name, 'dispatcher', 'the dispatcher Deployment is dispatcher')
    // It needs Postgres and Redis and nothing else: no internal token, quote key or webhook key ring.
    const dispatcherSecrets = (deploymentOf.get('dispatcher')?.spec.template.spec.containers[0].env ?? []).map((entry: Doc) => entry.valueFrom?.secretKeyRef?.key).filter(Boolean).sort()
    t.same(dispatcherSecrets, ['DATABASE_URL_DISPATCHER', 'REDIS_URL'], 'the dispatcher reads its own database URL and REDIS_URL, no other secret')
    const job = ofKind('Job')[0]
    t.equal(roleOf(job?.spec.template.spec.containers[0].args ?? []), 'migrate', 'the Job migrates')
    t.ok(ofKind('Deployment').every((d) => d.spec.template.spec.containers.length === 1), 'one container per pod')
  })

  t.test('config and secrets are apart', async (t) => {
    for (const config of ofKind('ConfigMap')) {
      for (const key of ['DATABASE_URL', 'REDIS_URL']) t.notOk(key in (config.data ?? {}), `${key} is not in ConfigMap ${config.metadata.name}`)
    }
    // No Secret is committed: kustomize generates it from secrets.env, which git ignores.
    t.same(k8sDocs.filter((doc) => doc.kind === 'Secret' && !doc.generated).map((doc) => doc.file), [], 'no Secret manifest in deploy/k8s')
    const kustomization = ofKind('Kustomization')[0]
    t.same(kustomization?.secretGenerator?.map((g: Doc) => [g.name, g.envs]), [['courier-secrets', ['secrets.env']]], 'courier-secrets is generated from secrets.env')
    t.ok(read('.gitignore').split('\n').map((line) => line.trim()).includes(`${K8S_DIR}/secrets.env`), 'secrets.env is git-ignored')
    t.ok(read('.dockerignore').split('\n').map((line) => line.trim()).includes('deploy/k8s'), 'and stays out of the image build context')
    t.notOk(existsSync(path.join(projectRoot, K8S_DIR, 'secret.yaml')), 'the placeholder secret.yaml is gone')
    // Every key a pod or KEDA reads is in the example file, so a copy of it is complete.
    const exampleKeys = new Set(Object.keys(named('Secret', 'courier-secrets')?.stringData ?? {}))
    const refs = [...ofKind('Deployment'), ...ofKind('Job')].flatMap((d) => (d.spec.template.spec.containers[0].env ?? []).map((e: Doc) => e.valueFrom?.secretKeyRef).filter(Boolean))
    // An optional key is there as a comment, to be filled in where it applies.
    const commentedKeys = new Set(read(`${K8S_DIR}/secrets.env.example`).split('\n').flatMap((line) => /^# ([A-Z][A-Z0-9_]*)=/.exec(line)?.[1] ?? []))
    for (const ref of [...refs, ...ofKind('TriggerAuthentication').flatMap((a) => a.spec.secretTargetRef)]) {
      t.equal(ref.name, 'courier-secrets', `${ref.key} comes from the generated Secret`)
      t.ok(ref.optional === true ? commentedKeys.has(ref.key) : exampleKeys.has(ref.key), `secrets.env.example has ${ref.key}`)
    }
    // kustomize renames the generated Secret (content hash) in the pods' refs; KEDA's needs kustomizeconfig.yaml.
    const nameRefs = [...kustomizeConfigs].flatMap((file) => (parse(read(`${K8S_DIR}/${file}`)) as Doc).nameReference ?? [])
    t.ok(nameRefs.some((ref: Doc) => ref.kind === 'Secret' && ref.fieldSpecs?.some((spec: Doc) => spec.kind === 'TriggerAuthentication' && spec.path === 'spec/secretTargetRef/name')), 'kustomize renames the Secret in the TriggerAuthentication too')
  })

  t.test('the shared ConfigMap: every key is read by a process that takes it; webhook URLs strict', async (t) => {
    const config = named('ConfigMap', 'courier-config')
    t.ok(config, 'courier-config exists')
    const takers = workloads.filter((workload) => (workload.spec.template.spec.containers as Doc[]).some((container) =>
      (container.envFrom ?? []).some((source: Doc) => source.configMapRef?.name === 'courier-config')))
    const roles = takers.map((workload) => roleOf([...(workload.spec.template.spec.containers[0].command ?? []), ...(workload.spec.template.spec.containers[0].args ?? [])])).filter((role): role is string => role !== undefined)
    t.same([...new Set(roles)].sort(), [...SERVICES, 'migrate'].sort(), 'every service and the migration take it')
    for (const name of Object.keys(config?.data ?? {})) {
      const readers = roles.filter((role) => allowedEnv(ROLES[role].schema).has(name))
      t.ok(readers.length > 0 || isOtel(name), `${name} is read by ${readers.join(', ') || 'OpenTelemetry'}`)
    }
    // DESIGN.md section 9 and section 13 item 14: false in the k8s config.
    t.equal(config?.data?.WEBHOOK_ALLOW_HTTP, 'false', 'WEBHOOK_ALLOW_HTTP is "false"')
    t.equal(config?.data?.WEBHOOK_ALLOW_PRIVATE, 'false', 'WEBHOOK_ALLOW_PRIVATE is "false"')
    for (const role of URL_CHECKERS) {
      const seen = loadConfig(ROLES[role].schema, effectiveEnv.get(role) ?? {}) as Record<string, unknown>
      t.equal(seen.WEBHOOK_ALLOW_HTTP, false, `${role} refuses http:// webhook URLs`)
      t.equal(seen.WEBHOOK_ALLOW_PRIVATE, false, `${role} refuses private webhook hosts`)
    }
  })

  t.test('Services reach real container ports', async (t) => {
    const services = ofKind('Service')
    t.same(services.map((s) => s.metadata.name).sort(), SERVICES, 'a Service per Deployment')
    for (const service of services) {
      const selector = service.spec.selector as Record<string, string>
      const targets = ofKind('Deployment').filter((d) => Object.entries(selector).every(([k, v]) => d.spec.template.metadata.labels?.[k] === v))
      t.equal(targets.length, 1, `Service ${service.metadata.name} selects one Deployment`)
      const container = targets[0]?.spec.template.spec.containers[0]
      const ports = (container?.ports ?? []) as Doc[]
      for (const port of service.spec.ports as Doc[]) {
        const target = port.targetPort ?? port.port
        const match = ports.find((p) => p.containerPort === target || p.name === target)
        t.ok(match, `Service ${service.metadata.name} port ${port.port} targets container port ${target}`)
      }
    }
    t.same(services.filter((s) => s.spec.type !== 'ClusterIP').map((s) => s.metadata.name), [], 'every Service is ClusterIP: nothing is exposed in clear text')
    t.equal(named('Service', 'pricing')?.spec.type, 'ClusterIP', 'pricing is internal')
    t.equal(named('Service', 'webhook-sender')?.spec.type, 'ClusterIP', 'the webhook sender is internal')
    t.equal(named('Service', 'console')?.spec.type, 'ClusterIP', 'the console is reached through its Ingress')
    const ingress = named('Ingress', 'console')
    const backend = ingress?.spec.rules?.[0]?.http?.paths?.[0]?.backend?.service
    t.equal(backend?.name, 'console', 'the Ingress sends to the console Service')
    t.ok((named('Service', 'console')?.spec.ports ?? []).some((p: Doc) => p.name === backend?.port?.name && p.targetPort === defaults.console.CONSOLE_PORT), 'on the console port')
    const consoleUrl = new URL(named('ConfigMap', 'courier-config')?.data?.CONSOLE_PUBLIC_URL)
    t.equal(consoleUrl.protocol, 'https:', 'CONSOLE_PUBLIC_URL is https, so the session cookie is Secure')
    t.same(ingress?.spec.tls?.[0]?.hosts, [consoleUrl.hostname], 'and the Ingress terminates TLS for that host')
    t.equal(ingress?.spec.rules?.[0]?.host, consoleUrl.hostname, 'and routes it')
    const secretRef = deploymentOf.get('console')?.spec.template.spec.containers[0].env?.find((entry: Doc) => entry.name === 'CONSOLE_SESSION_SECRET')?.valueFrom?.secretKeyRef
    t.same(secretRef, { name: 'courier-secrets', key: 'CONSOLE_SESSION_SECRET' }, 'the session secret comes by key from the generated Secret')
    t.same((named('Service', 'webhook-sender')?.spec.ports ?? []).map((p: Doc) => p.targetPort).sort(), [defaults.webhookSender.WEBHOOK_SENDER_PORT, defaults.webhookSender.WEBHOOK_SENDER_OPS_PORT].sort(), 'it forwards to the health and ops ports')
    t.equal(named('Service', 'dispatcher')?.spec.type, 'ClusterIP', 'the dispatcher is internal')
    t.same((named('Service', 'dispatcher')?.spec.ports ?? []).map((p: Doc) => p.targetPort).sort(), [defaults.dispatcher.DISPATCHER_PORT, defaults.dispatcher.DISPATCHER_OPS_PORT].sort(), 'it forwards to the health and ops ports')
    const gateway = deploymentOf.get('gateway')
    const pricingUrl = new URL(gateway?.spec.template.spec.containers[0].env.find((e: Doc) => e.name === 'PRICING_URL')?.value)
    const pricingService = named('Service', pricingUrl.hostname.split('.')[0])
    t.ok(pricingService, `PRICING_URL names the Service ${pricingUrl.hostname}`)
    t.equal(pricingService?.spec.selector['app.kubernetes.io/name'], deploymentOf.get('pricing')?.metadata.name, 'which selects the pricing pods')
    const servicePort = (pricingService?.spec.ports ?? []).find((p: Doc) => p.port === Number(pricingUrl.port))
    t.equal(servicePort?.targetPort, defaults.pricing.PRICING_PORT, 'and forwards to the pricing port')
    // Every service that answers requests keeps a pod through a node drain.
    for (const name of ['gateway', 'pricing', 'console']) {
      const pdb = ofKind('PodDisruptionBudget').find((p) => p.spec.selector.matchLabels['app.kubernetes.io/name'] === name)
      t.equal(pdb?.spec.minAvailable, 1, `${name} has a PodDisruptionBudget`)
    }
  })

  t.test('autoscaling', async (t) => {
    const hpas = ofKind('HorizontalPodAutoscaler')
    t.equal(hpas.length, 2, 'two HorizontalPodAutoscalers: pricing and the gateway')
    for (const role of ['pricing', 'gateway']) {
      const hpa = hpas.find((doc) => doc.spec.scaleTargetRef.name === deploymentOf.get(role)?.metadata.name)
      t.equal(hpa?.apiVersion, 'autoscaling/v2', `${role}: autoscaling/v2`)
      t.same(hpa?.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deploymentOf.get(role)?.metadata.name }, `it scales the ${role} Deployment`)
      t.equal(hpa?.spec.metrics?.[0]?.resource?.name, 'cpu', 'on CPU')
      t.ok(hpa?.spec.minReplicas >= 2, `${role}: never fewer than two`)
      t.notOk(deploymentOf.get(role)?.spec.replicas, `the ${role} Deployment leaves replicas to the HPA`)
    }

    const scaled = ofKind('ScaledObject')
    t.equal(scaled.length, 3, 'three KEDA ScaledObjects: the worker, the webhook sender and the dispatcher')
    const configPrefix = named('ConfigMap', 'courier-config')?.data?.QUEUE_PREFIX
    t.equal(configPrefix, defaults.common.QUEUE_PREFIX, 'the ConfigMap keeps the default queue prefix')
    t.match(configPrefix, /^\{[^}]+\}$/, 'which is a Redis Cluster hash tag')
    // Each queue consumer scales on BullMQ's waiting list of its own queue.
    for (const [role, queue] of [['worker', PLACEMENT_QUEUE], ['webhook-sender', WEBHOOK_QUEUE], ['dispatcher', DISPATCH_QUEUE]] as const) {
      t.test(`KEDA scales ${role} on the ${queue} queue`, async (t) => {
        const deployment = deploymentOf.get(role)
        const object = scaled.find((doc) => doc.spec.scaleTargetRef.name === deployment?.metadata.name)
        t.ok(object, `a ScaledObject scales the ${role} Deployment`)
        t.same(object?.spec.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: deployment?.metadata.name }, 'by its Deployment')
        t.notOk(deployment?.spec.replicas, `the ${role} Deployment leaves replicas to KEDA`)
        t.ok(object?.spec.minReplicaCount >= 2, `never fewer than two ${role}s: one evicted or lost leaves another`)
        const trigger = (object?.spec.triggers ?? []).find((entry: Doc) => String(entry.metadata?.listName).endsWith(':wait'))
        t.equal(trigger?.type, 'redis', 'redis list trigger')
        t.equal(trigger?.metadata?.listName, new QueueKeys(configPrefix).toKey(queue, 'wait'), `the list is BullMQ's wait list of the ${queue} queue`)
        t.equal(trigger?.metadata?.listName, `${defaults.common.QUEUE_PREFIX}:${queue}:wait`, 'spelled <prefix>:<queue>:wait')
        t.ok(Number(trigger?.metadata?.listLength) > 0, 'with a positive listLength')
        const auth = named('TriggerAuthentication', trigger?.authenticationRef?.name)
        t.ok(auth, 'its TriggerAuthentication exists')
        for (const ref of auth?.spec.secretTargetRef ?? []) {
          t.ok(ref.key in (named('Secret', ref.name)?.stringData ?? {}), `KEDA's ${ref.parameter} comes from Secret ${ref.name} key ${ref.key}`)
        }
        t.ok((auth?.spec.secretTargetRef ?? []).some((ref: Doc) => ref.parameter === 'address'), 'KEDA gets the Redis address')
        // KEDA connects where the services do, and over TLS exactly when REDIS_URL is rediss://.
        const secretValue = (parameter: string) => {
          const ref = (auth?.spec.secretTargetRef ?? []).find((entry: Doc) => entry.parameter === parameter)
          return ref ? named('Secret', ref.name)?.stringData?.[ref.key] as string | undefined : undefined
        }
        const redisUrl = new URL(named('Secret', 'courier-secrets')?.stringData?.REDIS_URL ?? 'redis://unset')
        t.equal(secretValue('address'), `${redisUrl.hostname}:${redisUrl.port || 6379}`, 'KEDA\'s address is REDIS_URL\'s host and port')
        const tls = redisUrl.protocol === 'rediss:'
        for (const trigger of (object?.spec.triggers ?? []) as Doc[]) {
          const byMetadata = trigger.metadata?.enableTLS === 'true'
          const byAuth = secretValue('tls') === 'enable'
          t.notOk(byMetadata && byAuth, `${trigger.metadata?.listName}: TLS is set one way only (KEDA refuses enableTLS with the TriggerAuthentication's tls)`)
          t.equal(byMetadata || byAuth, tls, `${trigger.metadata?.listName}: KEDA ${tls ? 'uses' : 'does not use'} TLS, as REDIS_URL (${redisUrl.protocol}//) does`)
        }
      })
    }
  })
  t.test('every service survives a node drain: a PodDisruptionBudget, at least two pods, spread over nodes and zones', async (t) => {
    const budgets = ofKind('PodDisruptionBudget')
    for (const deployment of ofKind('Deployment')) {
      const labels = deployment.spec.selector.matchLabels
      const name = deployment.metadata.name
      const budget = budgets.find((doc) => JSON.stringify(doc.spec.selector.matchLabels) === JSON.stringify(labels))
      t.ok(budget, `${name}: a PodDisruptionBudget selects its pods`)
      t.ok(budget?.spec.maxUnavailable === 1 || budget?.spec.minAvailable === 1, `${name}: a drain takes one pod at a time`)
      const least = deployment.spec.replicas ?? ofKind('HorizontalPodAutoscaler').find((doc) => doc.spec.scaleTargetRef.name === name)?.spec.minReplicas
        ?? ofKind('ScaledObject').find((doc) => doc.spec.scaleTargetRef.name === name)?.spec.minReplicaCount
      t.ok(least >= 2, `${name}: at least two pods (${String(least)}), so the budget never blocks a drain`)
      const spread: Doc[] = deployment.spec.template.spec.topologySpreadConstraints ?? []
      for (const key of ['kubernetes.io/hostname', 'topology.kubernetes.io/zone']) {
        const constraint = spread.find((entry) => entry.topologyKey === key)
        t.same(constraint?.labelSelector?.matchLabels, labels, `${name}: spread over ${key}, by its own pods`)
        t.equal(constraint?.whenUnsatisfiable, 'ScheduleAnyway', `${name}: never left unscheduled for it`)
      }
    }
  })

  // BullMQ keeps a job added with a priority in `<prefix>:<queue>:prioritized` (a sorted set), never
  // in the wait list: a queue that takes such jobs is watched there too, or a backlog of them scales nothing.
  t.test('KEDA counts the dispatch queue\'s prioritized jobs', async (t) => {
    const setters = [...tsFiles('shared'), ...tsFiles('services')].filter(([, source]) => /\bpriority:\s*[A-Za-z0-9_]/.test(source)).map(([file]) => file)
    t.same(setters, ['shared/dispatch/queue.ts'], 'only the dispatch queue\'s jobs carry a BullMQ priority (another queue that does needs a trigger like the one checked here)')
    t.ok((freeJob('C-1').opts.priority ?? 0) > 0, 'its free jobs do')
    const prefix = named('ConfigMap', 'courier-config')?.data?.QUEUE_PREFIX
    const object = ofKind('ScaledObject').find((doc) => doc.spec.scaleTargetRef.name === deploymentOf.get('dispatcher')?.metadata.name)
    const triggers = (object?.spec.triggers ?? []) as Doc[]
    const key = new QueueKeys(prefix).toKey(DISPATCH_QUEUE, 'prioritized')
    const wait = triggers.find((entry) => entry.metadata?.listName === new QueueKeys(prefix).toKey(DISPATCH_QUEUE, 'wait'))
    const prioritized = triggers.find((entry) => entry.metadata?.listName === key)
    t.ok(prioritized, `the dispatcher's ScaledObject watches ${key} (KEDA's redis scaler counts a sorted set with ZCARD)`)
    t.equal(prioritized?.type, wait?.type, 'with the wait list\'s trigger type')
    t.equal(prioritized?.metadata?.listLength, wait?.metadata?.listLength, 'the same jobs per replica')
    t.same(prioritized?.authenticationRef, wait?.authenticationRef, 'and the same TriggerAuthentication')
  })
  t.test('TLS for the API and the console: Ingress with cert-manager, https only, HSTS', async (t) => {
    const config = named('ConfigMap', 'courier-config')?.data ?? {}
    const gatewayEnvSeen = effectiveEnv.get('gateway') ?? {}
    const publicUrls: Record<string, string | undefined> = { gateway: gatewayEnvSeen.PUBLIC_BASE_URL, console: config.CONSOLE_PUBLIC_URL }
    for (const name of PUBLIC) {
      const ingress = named('Ingress', name)
      t.ok(ingress, `an Ingress in front of the ${name}`)
      const url = new URL(publicUrls[name] ?? 'http://unset')
      t.equal(url.protocol, 'https:', `${name}'s public URL is https`)
      const annotations = ingress?.metadata.annotations ?? {}
      t.ok(annotations['cert-manager.io/cluster-issuer'], `${name}: cert-manager issues the certificate`)
      t.equal(annotations['nginx.ingress.kubernetes.io/force-ssl-redirect'], 'true', `${name}: plain http is redirected to https`)
      t.equal(ingress?.spec.ingressClassName, 'nginx', `${name}: served by ingress-nginx (which sends HSTS on TLS hosts)`)
      t.same(ingress?.spec.tls?.[0]?.hosts, [url.hostname], `${name}: TLS for ${url.hostname}`)
      t.ok(ingress?.spec.tls?.[0]?.secretName, `${name}: into a named certificate Secret`)
      t.ok((ingress?.spec.rules ?? []).every((rule: Doc) => rule.host === url.hostname), `${name}: routes only that host`)
      t.equal(ingress?.spec.rules?.[0]?.http?.paths?.[0]?.backend?.service?.name, name, `${name}: to its Service`)
    }
    // nginx refuses a body over proxy-body-size (1 MB unless set) with its own page: each Ingress
    // must let through the largest body its service reads, so the service says what is wrong.
    const largest: Record<string, number> = { gateway: Math.max(loadConfig(gatewayEnv, gatewayEnvSeen).BODY_LIMIT_BYTES, PHOTO_MAX_BYTES + 64 * 1024), console: PHOTO_MAX_BYTES + 64 * 1024 }
    for (const name of PUBLIC) {
      const size = /^(\d+)([km]?)$/.exec(named('Ingress', name)?.metadata.annotations?.['nginx.ingress.kubernetes.io/proxy-body-size'] ?? '1m')
      const bytes = size ? Number(size[1]) * ({ '': 1, k: 1024, m: 1024 * 1024 }[size[2] ?? ''] ?? 1) : 0
      t.ok(bytes >= (largest[name] ?? Infinity), `${name}: the Ingress passes bodies up to ${bytes} bytes, at least the ${largest[name]} the service reads (a 5 MB photo with its form)`)
    }
    const gateway = loadConfig(gatewayEnv, gatewayEnvSeen)
    t.ok(gateway.PUBLIC_BASE_URL?.startsWith('https://'), 'the gateway knows it is https, so it sends Strict-Transport-Security itself')
    t.equal(gateway.TRUST_PROXY, 1, 'the gateway trusts one proxy hop (the Ingress controller) for client addresses')
    t.equal(loadConfig(consoleEnv, effectiveEnv.get('console') ?? {}).TRUST_PROXY, 1, 'and so does the console')
    t.same(ofKind('Service').filter((s) => s.spec.type === 'LoadBalancer' || s.spec.type === 'NodePort'), [], 'no Service bypasses the Ingress')
  })

  t.test('the console\'s Ingresses route every page it serves the public', async (t) => {
    const ingress = named('Ingress', 'console')
    const links = named('Ingress', 'console-links')
    const prefixes: string[] = [ingress, links].flatMap((one) => (one?.spec.rules ?? []) as Doc[]).flatMap((rule) => (rule.http?.paths ?? []) as Doc[])
      .filter((entry) => entry.backend?.service?.name === 'console' && entry.pathType === 'Prefix')
      .map((entry) => String(entry.path).replace(/\/+$/, ''))
    /** Prefix matching as Kubernetes defines it: whole path elements. */
    const routed = (urlPath: string) => prefixes.some((prefix) => urlPath === prefix || urlPath.startsWith(`${prefix}/`))
    const routes = consoleRoutePaths()
    t.ok(routes.includes('/t/:token') && routes.includes('/courier') && routes.includes('/console/login'), 'the console\'s routes were found (tracking, courier app, console)')
    for (const route of routes) t.ok(routed(route), `${route} reaches the console through its Ingress`)
    for (const internal of ['/healthz', '/readyz', '/metrics']) t.notOk(routed(internal), `${internal} is not routed to the public`)
    t.notOk([ingress, links].some((one) => (one?.spec.rules ?? []).some((rule: Doc) => (rule.http?.paths ?? []).some((entry: Doc) => entry.backend?.service?.port?.name === 'metrics' || entry.backend?.service?.port?.number === defaults.console.CONSOLE_OPS_PORT))), 'no path goes to the ops (metrics) port')
    // The placement worker writes each order's tracking_url on this base (TRACKING_PUBLIC_URL, else CONSOLE_PUBLIC_URL).
    const worker = loadConfig(workerEnv, effectiveEnv.get('worker') ?? {})
    const tracking = new URL(`${worker.TRACKING_PUBLIC_URL ?? worker.CONSOLE_PUBLIC_URL}/t/${'A'.repeat(22)}`)
    t.ok((links?.spec.rules ?? []).some((rule: Doc) => rule.host === tracking.hostname), `recipients' tracking links (${tracking.origin}) are on the console's host`)
    t.ok(routed(tracking.pathname), `and ${tracking.pathname} is routed to the console`)
  })

  // nginx logs each request line, path and query: the links that are their own credential go
  // through Ingresses that turn the access log off, on the same host and certificate, and their
  // paths are the longest match there, so no other rule of that host (nginx takes the longest) takes them.
  t.test('links that are their own credential reach their service through an Ingress without an access log', async (t) => {
    const secretPaths: Record<string, { main: string; paths: string[] }> = {
      'console-links': { main: 'console', paths: ['/t/AAAAAAAAAAAAAAAAAAAAAA', '/console/set-password'] },
      'gateway-links': { main: 'gateway', paths: ['/v2/proof-photos/a2V5/1795896180/c2ln'] },
    }
    for (const [name, { main, paths }] of Object.entries(secretPaths)) {
      const links = named('Ingress', name)
      const of = named('Ingress', main)
      t.equal(links?.metadata.annotations?.['nginx.ingress.kubernetes.io/enable-access-log'], 'false', `${name}: no access log`)
      t.equal(links?.metadata.annotations?.['nginx.ingress.kubernetes.io/force-ssl-redirect'], 'true', `${name}: https only`)
      t.notOk(links?.metadata.annotations?.['cert-manager.io/cluster-issuer'], `${name}: no second certificate; ${main}'s covers the host`)
      t.same(links?.spec.tls, of?.spec.tls, `${name}: the same host and certificate Secret as ${main}`)
      t.same(links?.spec.rules?.map((rule: Doc) => rule.host), of?.spec.rules?.map((rule: Doc) => rule.host), `${name}: the same host`)
      const longest = (ingresses: Doc[], urlPath: string) => ingresses.flatMap((one) => (one?.spec.rules?.[0]?.http?.paths ?? []).map((entry: Doc) => ({ one: one.metadata.name, path: String(entry.path) })))
        .filter(({ path }) => urlPath === path || urlPath.startsWith(`${path.replace(/\/+$/, '')}/`) || urlPath.startsWith(`${path}?`))
        .sort((a, b) => b.path.length - a.path.length)[0]?.one
      for (const urlPath of paths) t.equal(longest([of!, links!], urlPath), name, `${urlPath} is matched by ${name}`)
      t.ok((links?.spec.rules?.[0]?.http?.paths ?? []).every((entry: Doc) => entry.backend?.service?.name === main && entry.backend?.service?.port?.name === 'http'), `${name}: to the ${main}'s http port`)
    }
  })

  t.test('Pod Security Admission, pinned images', async (t) => {
    const labels = named('Namespace', 'courier')?.metadata.labels ?? {}
    t.equal(labels['pod-security.kubernetes.io/enforce'], 'restricted', 'the namespace enforces the restricted profile')
    const images = [...ofKind('Deployment'), ...ofKind('Job')].map((d) => d.spec.template.spec.containers[0].image as string)
    for (const image of new Set(images)) t.match(image, /^[^:]+:\d+\.\d+\.\d+$/, `${image} names a version`)
    const entry = (ofKind('Kustomization')[0]?.images ?? []).find((e: Doc) => e.name === 'courier')
    t.match(String(entry?.newTag ?? entry?.digest ?? ''), /^(\d+\.\d+\.\d+|sha256:[0-9a-f]{64})$/, 'kustomize pins a version (or a digest), never latest')
    t.notMatch(read(`${K8S_DIR}/kustomization.yaml`), /newTag:\s*"?latest/, 'no :latest')
  })

  t.test('pricing listens on the pod address in the cluster', async (t) => {
    t.equal(loadConfig(pricingEnv, effectiveEnv.get('pricing') ?? {}).HOST, '0.0.0.0', 'HOST=0.0.0.0 is set explicitly (the default is 127.0.0.1)')
  })

  t.test('one database role per process; only the migration owns the schema', async (t) => {
    const roles = read('deploy/postgres/roles.sql')
    const keys = new Map<string, string>()
    for (const workload of [...ofKind('Deployment'), ...oneShots()]) {
      const container = workload.spec.template.spec.containers[0]
      const role = roleOf([...(container.command ?? []), ...(container.args ?? [])])!
      const ref = (container.env ?? []).find((e: Doc) => e.name === 'DATABASE_URL')?.valueFrom?.secretKeyRef
      t.ok(ref, `${role}: DATABASE_URL comes from a Secret key`)
      keys.set(role, ref?.key)
      const user = new URL(named('Secret', ref?.name)?.stringData?.[ref?.key] ?? 'postgres://x').username
      const expected = role === 'migrate' ? 'courier_owner' : `courier_${role.replaceAll('-', '_')}`
      t.equal(user, expected, `${role} connects as ${expected}`)
      t.match(roles, new RegExp(`'${expected}'`), `roles.sql creates ${expected}`)
    }
    t.equal(new Set(keys.values()).size, keys.size, 'no two processes share a database URL')
    t.match(roles, /ALTER DEFAULT PRIVILEGES FOR ROLE courier_owner IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO courier_app/, 'services get DML on the tables the owner makes')
  })

  t.test('NetworkPolicies: default deny, then exactly what each process needs', async (t) => {
    const policies = ofKind('NetworkPolicy')
    const deny = policies.find((p) => Object.keys(p.spec.podSelector ?? {}).length === 0 && !p.spec.ingress && !p.spec.egress)
    t.same(deny?.spec.policyTypes?.slice().sort(), ['Egress', 'Ingress'], 'a default-deny policy covers ingress and egress of every pod')
    const selects = (selector: Doc, labels: Record<string, string>) =>
      Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
      (selector.matchExpressions ?? []).every((e: Doc) => (e.operator === 'In' ? e.values.includes(labels[e.key]) : e.operator === 'NotIn' ? !e.values.includes(labels[e.key]) : true))
    type Peer = string
    const peerOf = (peer: Doc | undefined): Peer => {
      if (!peer) return 'any'
      if (peer.ipBlock) return `ip:${peer.ipBlock.cidr}-${(peer.ipBlock.except ?? []).length}`
      const ns = peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name']
      const pod = peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] ?? peer.podSelector?.matchLabels?.['k8s-app']
      return `${ns ?? 'courier'}/${pod ?? '*'}`
    }
    /** Every (peer, port) a pod may reach or be reached from, by the policies that select it. */
    const allowed = (workload: Doc, direction: 'ingress' | 'egress') => {
      const labels = workload.spec.template.metadata.labels as Record<string, string>
      const ports = new Map<string, number>((workload.spec.template.spec.containers[0].ports ?? []).map((p: Doc) => [p.name, p.containerPort]))
      const pairs = new Set<string>()
      for (const policy of policies.filter((p) => selects(p.spec.podSelector ?? {}, labels))) {
        for (const rule of policy.spec[direction] ?? []) {
          const peers: Array<Doc | undefined> = (direction === 'egress' ? rule.to : rule.from) ?? [undefined]
          // A port entry without a port is every port of its protocol.
          for (const peer of peers) for (const port of rule.ports ?? [{ port: 'all' }]) pairs.add(`${peerOf(peer)}:${port.port === undefined ? `all-${port.protocol ?? 'TCP'}` : typeof port.port === 'string' && ports.has(port.port) ? ports.get(port.port) : port.port}`)
        }
      }
      return [...pairs].sort()
    }
    const config = named('ConfigMap', 'courier-config')?.data ?? {}
    const s3 = new URL(config.S3_ENDPOINT ?? 'https://s3.amazonaws.com')
    const s3Port = Number(s3.port || (s3.protocol === 'https:' ? 443 : 80))
    t.same(SERVICES.filter(opensPhotoStore), ['console', 'gateway', 'worker'], 'the gateway, the console and the worker open the photo store (the check below finds them)')
    // kube-dns, or NodeLocal DNSCache's node-local address where the cluster runs it.
    const dns = ['kube-system/kube-dns:53', 'ip:169.254.20.10/32-0:53']
    const data = ['any:5432', 'any:6379', 'any:6380', 'observability/*:4318']
    const scrape = (port: number) => `monitoring/*:${port}`
    // S3 (and STS for the pod role's credentials) over https, from any address: VPC endpoints are private.
    const photoStore = ['any:443']
    const expected: Record<string, { egress: string[]; ingress: string[] }> = {
      gateway: { egress: [...dns, ...data, ...photoStore, 'courier/pricing:3001'], ingress: ['ingress-nginx/*:3000', scrape(9464)] },
      pricing: { egress: [...dns, ...data], ingress: ['courier/gateway:3001', scrape(9465)] },
      worker: { egress: [...dns, ...data, ...photoStore], ingress: [scrape(9466)] },
      'webhook-sender': { egress: [...dns, ...data, 'ip:0.0.0.0/0-9:all-TCP', 'ip:::/0-8:all-TCP'], ingress: [scrape(9467)] },
      console: { egress: [...dns, ...data, ...photoStore], ingress: ['ingress-nginx/*:3004', scrape(9468)] },
      dispatcher: { egress: [...dns, ...data], ingress: [scrape(9469)] },
      migrate: { egress: [...dns, 'any:5432'], ingress: [] },
    }
    for (const workload of [...ofKind('Deployment'), ...oneShots()]) {
      const container = workload.spec.template.spec.containers[0]
      const role = roleOf([...(container.command ?? []), ...(container.args ?? [])])!
      t.same(allowed(workload, 'egress'), [...expected[role].egress].sort(), `${role} may reach exactly ${expected[role].egress.join(', ')}`)
      t.same(allowed(workload, 'ingress'), [...expected[role].ingress].sort(), `${role} may be reached by exactly ${expected[role].ingress.join(', ') || 'nobody'}`)
      // With S3_BUCKET set every process that opens the photo store talks to S3, whatever the table above says.
      if (workload.kind === 'Deployment' && config.S3_BUCKET && opensPhotoStore(role)) {
        t.ok(allowed(workload, 'egress').some((pair) => pair.startsWith('any:') && pair.endsWith(`:${s3Port}`)), `${role} opens the photo store (createPhotoStore), so it may reach S3 on port ${s3Port}`)
        // And it has a way to the bucket's credentials: the ServiceAccount a pod identity annotates, or static keys.
        const account = named('ServiceAccount', workload.spec.template.spec.serviceAccountName)
        t.equal(account?.automountServiceAccountToken, false, `${role} runs as a ServiceAccount of its own (${workload.spec.template.spec.serviceAccountName}), with no API token`)
        const keys = (container.env ?? []).filter((entry: Doc) => entry.name.startsWith('S3_')).map((entry: Doc) => [entry.name, entry.valueFrom?.secretKeyRef?.key, entry.valueFrom?.secretKeyRef?.optional])
        t.same(keys, [['S3_ACCESS_KEY_ID', 'S3_ACCESS_KEY_ID', true], ['S3_SECRET_ACCESS_KEY', 'S3_SECRET_ACCESS_KEY', true]], `${role} may take static S3 keys from secrets.env`)
      }
    }
    const webhook = policies.flatMap((p) => p.spec.egress ?? []).flatMap((rule: Doc) => rule.to ?? []).find((peer: Doc) => peer.ipBlock?.cidr === '0.0.0.0/0')
    for (const range of ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8', '100.64.0.0/10']) {
      t.ok(webhook?.ipBlock.except.includes(range), `webhook deliveries cannot reach ${range}`)
    }
    // The URL rules take any port, so the fence must too: an endpoint the API accepts is one the sender can reach.
    const onAnotherPort = 'https://93.184.215.14:8443/hooks'
    t.ok((await checkWebhookUrl(onAnotherPort, { allowHttp: false, allowPrivate: false })).ok, `the API accepts the webhook URL ${onAnotherPort}`)
    const sender = deploymentOf.get('webhook-sender')!
    t.ok(allowed(sender, 'egress').some((pair) => pair.startsWith('ip:0.0.0.0/0-') && (pair.endsWith(':all-TCP') || pair.endsWith(':8443'))), 'and the webhook sender may open TCP 8443 to that public address')
  })
})

t.test('observability: compose\'s profile and the opt-in kustomize component (DESIGN 15)', async (t) => {
  const services = compose.services as Record<string, Doc>
  const observability = Object.entries(services).filter(([, service]) => (service.profiles ?? []).includes('observability')).map(([name]) => name).sort()
  t.same(observability, ['grafana', 'jaeger', 'prometheus'], 'docker compose --profile observability adds Prometheus, Grafana and Jaeger')
  for (const [name, service] of Object.entries(services)) {
    const needs = Object.keys(service.depends_on ?? {}).filter((dependency) => observability.includes(dependency))
    if (!observability.includes(name)) t.same(needs, [], `${name} starts without the profile`)
    for (const volume of (service.volumes ?? []) as string[]) {
      const source = volume.split(':')[0]!
      if (source.startsWith('./')) t.ok(existsSync(path.join(projectRoot, source)), `${name} mounts ${source}, which exists`)
    }
  }
  const mounted = (service: string, target: string) => ((services[service]?.volumes ?? []) as string[]).find((volume) => volume.split(':')[1] === target)?.split(':')[0]
  t.equal(mounted('prometheus', '/etc/prometheus/prometheus.yml'), './deploy/observability/prometheus.yml', 'Prometheus reads deploy/observability/prometheus.yml')
  t.equal(mounted('prometheus', '/etc/prometheus/rules'), './deploy/observability/rules', 'and its rules, where rule_files points')
  t.same((parse(read('deploy/observability/prometheus.yml')) as Doc).rule_files, ['rules/courier.rules.yml'])
  t.equal(mounted('grafana', '/etc/grafana/provisioning'), './deploy/observability/grafana/provisioning', 'Grafana is provisioned')
  const provider = (parse(read('deploy/observability/grafana/provisioning/dashboards/courier.yml')) as Doc).providers[0]
  t.equal(mounted('grafana', provider.options.path), './deploy/observability/grafana/dashboards', 'with the dashboards where its provider looks')
  const scrapeJobs = (parse(read('deploy/observability/prometheus.yml')) as Doc).scrape_configs as Doc[]
  for (const job of scrapeJobs) {
    const [target] = job.dns_sd_configs[0].names as string[]
    t.ok(services[target!], `Prometheus finds the compose service ${target}`)
    t.ok(((services[target!]?.expose ?? []) as unknown[]).map(String).includes(String(job.dns_sd_configs[0].port)), `which exposes ${job.dns_sd_configs[0].port}`)
  }
  const otlp = new URL(services.gateway.environment.OTEL_EXPORTER_OTLP_ENDPOINT)
  t.ok(observability.includes(otlp.hostname), 'traces go to the profile\'s Jaeger')

  const componentDir = `${K8S_DIR}/observability`
  const component = parse(read(`${componentDir}/kustomization.yaml`)) as Doc
  t.equal(component.kind, 'Component', 'deploy/k8s/observability is a kustomize Component')
  const docs = (component.resources as string[]).map((file) => parse(read(`${componentDir}/${file}`)) as Doc)
  t.same(docs.map((doc) => doc.kind).sort(), ['PodMonitor', 'PrometheusRule'])
  const base = parse(read(`${K8S_DIR}/kustomization.yaml`)) as Doc
  for (const doc of docs) t.equal(doc.metadata.namespace, base.namespace, `${doc.kind} in the ${base.namespace} namespace`)
  for (const included of (base.components ?? []) as string[]) t.equal((parse(read(`${K8S_DIR}/${included}/kustomization.yaml`)) as Doc).kind, 'Component', `${included} is a Component`)
  // kube-prometheus-stack's Prometheus loads only PodMonitors and rules labelled with its release.
  for (const doc of docs) t.equal(doc.metadata.labels?.release, 'kube-prometheus-stack', `${doc.kind} carries the label kube-prometheus-stack's selectors look for`)
  const podMonitor = docs.find((doc) => doc.kind === 'PodMonitor')!
  const selected = (podMonitor.spec.selector.matchExpressions as Doc[]).find((expression) => expression.key === 'app.kubernetes.io/name')
  t.same([...selected?.values ?? []].sort(), SERVICES, 'the PodMonitor selects the six services\' pods')
  const endpoint = podMonitor.spec.podMetricsEndpoints[0]
  t.equal(endpoint.path, '/metrics')
  t.same(endpoint.relabelings, [{ sourceLabels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'], targetLabel: 'job' }], 'the job label is the service\'s name, as the rules and dashboards select')
  t.same(scrapeJobs.map((job) => job.job_name).sort(), SERVICES, 'the same job names compose\'s Prometheus uses')
  for (const deployment of k8sDocs.filter((doc) => doc.kind === 'Deployment')) {
    const name = deployment.spec.template.metadata.labels?.['app.kubernetes.io/name']
    t.equal(name, deployment.metadata.name, `${deployment.metadata.name}: its pods carry app.kubernetes.io/name`)
    const ports = (deployment.spec.template.spec.containers[0].ports ?? []) as Doc[]
    const metrics = ports.find((port) => port.name === endpoint.port)
    const job = scrapeJobs.find((scrape) => scrape.job_name === name)
    t.equal(metrics?.containerPort, job?.dns_sd_configs[0].port, `${deployment.metadata.name}: the \`${endpoint.port}\` port is its ops port`)
  }
})

t.test('the test reads real files', async (t) => {
  t.ok(statSync(path.join(projectRoot, 'deploy/Dockerfile')).isFile(), 'deploy/Dockerfile')
  t.ok(Object.keys(compose.services ?? {}).length >= 8, 'compose has its services')
  t.match(scripts['start:webhook-sender'], /^node --import \.\/dist\/shared\/telemetry\/register\.js dist\/services\/webhook-sender\/main\.js$/, 'package.json starts the webhook sender like the other services')
  t.ok(k8sFiles.includes('webhook-sender.yaml') && k8sFiles.includes('webhook-sender-scaledobject.yaml'), 'deploy/k8s has the webhook sender and its ScaledObject')
  t.ok(k8sFiles.includes('dispatcher.yaml') && k8sFiles.includes('dispatcher-scaledobject.yaml'), 'deploy/k8s has the dispatcher and its ScaledObject')
  t.equal(DISPATCH_QUEUE, 'dispatch', 'the dispatcher consumes the queue named dispatch')
})
