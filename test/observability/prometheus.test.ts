import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import t, { type Test } from 'tap'
import { parse, stringify } from 'yaml'
import { startLauncher } from '../helpers/launcher.js'
import { childEnv, freePort, projectRoot, waitFor, waitForValue } from '../helpers/processes.js'
import { consoleTemplate, dashboards, findBinary, OBSERVABILITY_DIR, RULES_FILE, ruleGroups } from '../helpers/prometheus.js'
import { shipment } from '../helpers/shipments.js'
import { startReceiver } from '../helpers/webhook-receiver.js'

/*
 * DESIGN 15's end-to-end check: a real Prometheus (Debian's /usr/bin/prometheus, on a free port,
 * its data in a temp dir, scraping every second) against the whole stack started by the launcher,
 * under a short load of quotes, placements, cancels, webhooks and five simulated couriers. Every
 * dashboard panel's query and every recording rule must return data: a metric renamed in the
 * code, a label the rules expect and the services do not write, a bucket bound the SLO needs,
 * each fails here. With OBSERVABILITY_SCREENSHOTS=1 it also renders each dashboard's queries in
 * Prometheus's own graph page with the headless Chromium and writes docs/observability/*.png.
 */

const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/courier_test'
const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const prometheus = findBinary('prometheus')
const DATA_DEADLINE_MS = 90_000

/** The ops-port variable of each scrape job (the job names are the services'). */
const OPS_PORT_ENV: Record<string, string> = {
  gateway: 'GATEWAY_OPS_PORT',
  pricing: 'PRICING_OPS_PORT',
  worker: 'WORKER_OPS_PORT',
  'webhook-sender': 'WEBHOOK_SENDER_OPS_PORT',
  console: 'CONSOLE_OPS_PORT',
  dispatcher: 'DISPATCHER_OPS_PORT',
}

interface QueryResult {
  status: string
  error?: string
  data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }
}

t.test('a real Prometheus scraping the launched stack: every dashboard query and every recording rule returns data', { skip: 'missing' in prometheus ? prometheus.missing : false }, async (t) => {
  if (!('path' in prometheus)) return
  const launched = await startLauncher(t, { databaseUrl, redisUrl, env: { DISPATCH_OFFER_S: '3', DISPATCH_RETRY_S: '1', LOG_LEVEL: 'error' } })

  // The deployed scrape config, each job's discovery swapped for the launcher's ops port.
  const deployed = parse(readFileSync(path.join(OBSERVABILITY_DIR, 'prometheus.yml'), 'utf8')) as { scrape_configs: { job_name: string }[] }
  const dir = mkdtempSync(path.join(tmpdir(), 'courier-prometheus-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: [RULES_FILE],
    scrape_configs: deployed.scrape_configs.map(({ job_name }) => ({ job_name, static_configs: [{ targets: [`127.0.0.1:${launched.env[OPS_PORT_ENV[job_name]!]}`] }] })),
  }
  t.equal(config.scrape_configs.length, 6, 'six jobs, one per service')
  writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config))
  // The dashboards as Prometheus console pages, for the screenshots.
  const consoles = path.join(dir, 'consoles')
  mkdirSync(consoles)
  for (const [file, dashboard] of dashboards()) writeFileSync(path.join(consoles, file.replace(/\.json$/, '.html')), consoleTemplate(dashboard, 180))
  const port = await freePort()
  const server = spawn(prometheus.path, [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn', '--storage.tsdb.retention.time=1h',
    `--web.console.templates=${consoles}`, `--web.console.libraries=${consoles}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  let serverLog = ''
  server.stderr.on('data', (chunk: Buffer) => { serverLog += chunk })
  const stopped = new Promise((resolve) => server.once('exit', resolve))
  t.teardown(async () => {
    if (server.exitCode === null) server.kill('SIGTERM')
    if (!(await waitFor(() => server.exitCode !== null || server.signalCode !== null, 10_000))) server.kill('SIGKILL')
    await stopped
  })
  const base = `http://127.0.0.1:${port}`
  t.ok(await waitFor(async () => (await fetch(`${base}/-/ready`).catch(() => null))?.ok === true, 20_000), `Prometheus is ready\n${serverLog}`)

  // The load: a webhook receiver, five riders through the public courier API, and quotes,
  // placements and cancels until every query has its data.
  const { business } = launched
  const receiver = await startReceiver(t)
  const endpoint = await business('POST', 'webhook-endpoints', { url: receiver.url('/hooks') })
  t.equal(endpoint.status, 201)
  receiver.route('/hooks', { secrets: [(await endpoint.json()).secret], respond: () => 204 })
  const simulator = spawn(process.execPath, [path.join(projectRoot, 'dist/services/simulator/main.js'), '--couriers', '5', '--speed', '3000', '--tick-ms', '1000', '--accept', '0.8', '--quiet', '--api', launched.baseUrl],
    { env: childEnv(launched.env), stdio: 'ignore' })
  t.teardown(() => { if (simulator.exitCode === null) simulator.kill('SIGKILL') })

  let loading = true
  const load = (async () => {
    for (let round = 0; loading; round++) {
      await business('POST', 'order/cost', { pickup_address: 'Victoria Island, Lagos', dropoff_address: 'Ikeja, Lagos', weight: 3, vehicle_type: 'bike' })
      const placed = await business('POST', 'order', [shipment({ recipient_name: `Recipient ${round}` })])
      if (round % 3 === 0 && placed.status === 201) {
        const orderId: string = (await placed.json()).orders[0].order_id
        await business('POST', `orders/${orderId}/cancel`)
      }
      await business('POST', 'order', [shipment({ weight: 5000 })]) // refused: a 4xx answer, never a page
    }
  })()
  t.teardown(async () => { loading = false; await load })

  const query = async (expr: string): Promise<QueryResult> => (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`)).json() as Promise<QueryResult>
  const hasData = (result: QueryResult) => result.status === 'success' && (result.data?.result ?? []).some((sample) => Number.isFinite(Number(sample.value[1])))

  const panels = [...dashboards()].flatMap(([file, dashboard]) => dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ what: `${file} "${panel.title}"`, expr: target.expr }))))
  const records = ruleGroups().flatMap((group) => group.rules).flatMap((rule) => (rule.record ? [{ what: `recording rule`, expr: rule.record }] : []))
  const checks = [...panels, ...records]
  t.ok(panels.length > 30 && records.length > 20, `${panels.length} panel queries and ${records.length} recording rules`)

  const outcome = await waitForValue(async () => {
    const results = await Promise.all(checks.map(async (check) => ({ ...check, result: await query(check.expr) })))
    return results.filter((check) => !hasData(check.result))
  }, (empty) => empty.length === 0, DATA_DEADLINE_MS, 1000)
  for (const check of checks) {
    const missing = outcome.value.find((empty) => empty.expr === check.expr && empty.what === check.what)
    t.notOk(missing, `${check.what}: ${check.expr.replace(/\s+/g, ' ').trim()} returns data${missing ? ` (got ${JSON.stringify(missing.result).slice(0, 300)})` : ''}`)
  }

  // Each target's health is its last scrape's: one scrape past its 1 s timeout on a busy machine
  // reads `down` until the next, a second later. Up together, within a deadline.
  type Target = { labels: { job: string }; health: string; lastError: string }
  const allUp = Object.keys(OPS_PORT_ENV).sort().map((job) => [job, 'up'])
  const health = (active: Target[]) => active.map((target) => [target.labels.job, target.health]).sort()
  const targets = await waitForValue(async () => ((await (await fetch(`${base}/api/v1/targets`)).json()) as { data: { activeTargets: Target[] } }).data.activeTargets,
    (active) => JSON.stringify(health(active)) === JSON.stringify(allUp), 30_000, 500)
  t.same(health(targets.value), allUp, 'every service scraped and up',
    { errors: targets.value.filter((target) => target.health !== 'up').map((target) => `${target.labels.job}: ${target.lastError}`) })
  const rules = await (await fetch(`${base}/api/v1/rules`)).json() as { data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } }
  const evaluated = rules.data.groups.flatMap((group) => group.rules)
  t.equal(evaluated.length, ruleGroups().flatMap((group) => group.rules).length, 'Prometheus loaded every rule')
  t.same(evaluated.filter((rule) => rule.health !== 'ok').map((rule) => `${rule.name}: ${rule.health} ${rule.lastError ?? ''}`), [], 'and evaluates each without error')

  if (process.env.OBSERVABILITY_SCREENSHOTS) await renderDashboards(t, base)
  loading = false
  await load
})

/**
 * Each dashboard on Prometheus's own console pages (the Debian package's classic UI draws them
 * with prom_console.js): the same panels and queries over the last three minutes of load, saved
 * as docs/observability/<dashboard>.png. Grafana itself cannot be installed here; these are
 * renderings of the same queries. Waits for three minutes of samples so the graphs have a shape.
 */
async function renderDashboards(t: Test, base: string): Promise<void> {
  const samples = async () => {
    const result = await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent('count_over_time(up{job="gateway"}[3m])')}`)).json() as QueryResult
    return Number(result.data?.result[0]?.value[1] ?? 0)
  }
  t.ok((await waitForValue(samples, (count) => count >= 170, 200_000, 2000)).held, 'three minutes of samples to draw')
  const { capture, openBrowser } = await import('../helpers/browser.js')
  const browser = await openBrowser(t)
  const page = await browser.newPage({ viewport: { width: 1500, height: 900 } })
  const outDir = path.join(projectRoot, 'docs/observability')
  mkdirSync(outDir, { recursive: true })
  for (const [file, dashboard] of dashboards()) {
    const graphs = dashboard.panels.filter((panel) => panel.type !== 'row').length
    await page.goto(`${base}/consoles/${file.replace(/\.json$/, '.html')}`)
    const drawn = await waitFor(async () => (await page.locator('.rickshaw_graph svg').count()) + (await page.locator('.prom_graph_error').count()) >= graphs, 30_000, 250)
    t.ok(drawn, `${file}: every panel drawn`)
    t.equal(await page.locator('.prom_graph_error').count(), 0, `${file}: no panel without data`)
    const png = path.join(outDir, file.replace(/\.json$/, '.png'))
    await capture(page, png, { fullPage: true })
    t.comment(`rendered ${path.relative(projectRoot, png)}`)
  }
}
