import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import GithubSlugger from 'github-slugger'
import { lexer, walkTokens } from 'marked'
import t from 'tap'
import { parse, stringify } from 'yaml'
import { dispatcherEnv, consoleEnv, gatewayEnv, loadConfig, pricingEnv, webhookSenderEnv, workerEnv } from '../../shared/config.js'
import { TEST_SECRETS } from '../helpers/db.js'
import { projectRoot } from '../helpers/processes.js'
import { dashboards, findBinary, OBSERVABILITY_DIR, RULE_TESTS_FILE, RULES_FILE, ruleGroups, type RuleGroup } from '../helpers/prometheus.js'

/*
 * DESIGN 15's rules, checked by promtool (Debian's prometheus package): they parse, and the unit
 * tests in deploy/observability/rules/courier.rules.test.yml make every alert fire when it should
 * and stay silent when it should not. Without promtool those two skip and say why; the rest (the
 * PrometheusRule holds the same groups, every alert's annotations and runbook anchor, the scrape
 * jobs and ports, the dashboards' data source) needs nothing installed.
 */

const promtool = findBinary('promtool')
const groups = ruleGroups()
const alerts = groups.flatMap((group) => group.rules).filter((rule) => rule.alert !== undefined)

const runPromtool = (args: string[]) => {
  if (!('path' in promtool)) throw new Error(promtool.missing)
  const result = spawnSync(promtool.path, args, { cwd: projectRoot, encoding: 'utf8' })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

t.test('promtool check rules', { skip: 'missing' in promtool ? promtool.missing : false }, async (t) => {
  const checked = runPromtool(['check', 'rules', RULES_FILE])
  t.equal(checked.status, 0, checked.output)
  t.match(checked.output, /SUCCESS: \d+ rules found/)
})

t.test('promtool test rules: every alert fires when it should and stays silent when it should not', { skip: 'missing' in promtool ? promtool.missing : false }, async (t) => {
  const tested = runPromtool(['test', 'rules', RULE_TESTS_FILE])
  t.equal(tested.status, 0, tested.output)
  t.match(tested.output, /SUCCESS/)
})

t.test('every alert has a unit test that fires it and one that keeps it silent', async (t) => {
  const unit = parse(readFileSync(RULE_TESTS_FILE, 'utf8')) as { rule_files: string[]; tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[] }
  t.same(unit.rule_files, [path.basename(RULES_FILE)], 'the unit tests load the rules file itself')
  const checks = unit.tests.flatMap((test) => test.alert_rule_test ?? [])
  t.ok(alerts.length >= 10, `${alerts.length} alerts`)
  for (const { alert } of alerts) {
    const mine = checks.filter((check) => check.alertname === alert)
    t.ok(mine.some((check) => (check.exp_alerts ?? []).length > 0), `${alert}: a test where it fires`)
    t.ok(mine.some((check) => (check.exp_alerts ?? []).length === 0), `${alert}: a test where it stays silent`)
  }
  t.same(checks.filter((check) => !alerts.some((rule) => rule.alert === check.alertname)), [], 'no test names an alert that does not exist')
})

t.test('every alert: severity, summary, description and a runbook_url to an anchor of docs/runbook.md', async (t) => {
  const runbook = readFileSync(path.join(projectRoot, 'docs/runbook.md'), 'utf8')
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  walkTokens(lexer(runbook), (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(token.text))
  })
  const bases = new Set<string>()
  for (const rule of alerts) {
    t.match(rule.labels?.severity, /^(page|ticket)$/, `${rule.alert}: severity page or ticket`)
    t.ok(rule.annotations?.summary, `${rule.alert}: summary`)
    t.ok(rule.annotations?.description, `${rule.alert}: description`)
    const url = rule.annotations?.runbook_url ?? ''
    const [base, anchor] = url.split('#')
    bases.add(base!)
    t.match(base, /\/docs\/runbook\.md$/, `${rule.alert}: the runbook_url is the runbook`)
    t.ok(anchor && anchors.has(anchor), `${rule.alert}: #${anchor} is a heading of docs/runbook.md`)
  }
  t.equal(bases.size, 1, 'one runbook base URL, replaced in one place')
})

// deploy/observability/alertmanager.yml: an example, so what it names must exist.
t.test('the Alertmanager example routes both severities and silences only alerts the rules have', async (t) => {
  type Matchers = { source_matchers: string[]; target_matchers: string[]; equal: string[] }
  const config = parse(readFileSync(path.join(OBSERVABILITY_DIR, 'alertmanager.yml'), 'utf8')) as {
    route: { receiver: string; group_by: string[]; routes: { matchers: string[]; receiver: string }[] }
    inhibit_rules: Matchers[]
    receivers: { name: string }[]
  }
  const receivers = config.receivers.map((receiver) => receiver.name)
  t.ok(receivers.includes(config.route.receiver), 'the default route has a receiver')
  for (const route of config.route.routes) t.ok(receivers.includes(route.receiver), `${route.matchers.join(',')}: its receiver exists`)
  const severities = new Set(alerts.map((alert) => String(alert.labels?.severity)))
  t.same([...severities].sort(), ['page', 'ticket'], 'the rules use two severities')
  t.same(config.route.routes.map((route) => route.matchers), [['severity="page"']], 'pages have a route of their own; tickets the default')
  t.ok(config.route.group_by.includes('alertname') && !config.route.group_by.includes('instance'), 'grouped by alert, not by replica')
  const names = new Set(alerts.map((alert) => String(alert.alert)))
  const named = (matcher: string) => /^alertname=~?"(.+)"$/.exec(matcher)?.[1]?.split('|') ?? []
  for (const rule of config.inhibit_rules) {
    for (const name of [...rule.source_matchers, ...rule.target_matchers].flatMap(named)) t.ok(names.has(name), `inhibit rule names ${name}, an alert of the rules`)
    t.notOk(rule.target_matchers.flatMap(named).some((name) => name.endsWith('Burn')), 'no SLO alert is ever silenced')
  }
})

t.test('the PrometheusRule of deploy/k8s/observability holds the same groups, and promtool accepts them', async (t) => {
  const prometheusRule = parse(readFileSync(path.join(projectRoot, 'deploy/k8s/observability/prometheusrule.yaml'), 'utf8')) as { kind: string; spec: { groups: RuleGroup[] } }
  t.equal(prometheusRule.kind, 'PrometheusRule')
  t.same(prometheusRule.spec.groups, groups, 'the same groups as deploy/observability/rules/courier.rules.yml')
  if (!('path' in promtool)) return void t.comment(`promtool check skipped: ${promtool.missing}`)
  const dir = mkdtempSync(path.join(tmpdir(), 'courier-rules-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'prometheusrule.rules.yml')
  writeFileSync(file, stringify({ groups: prometheusRule.spec.groups }))
  const checked = runPromtool(['check', 'rules', file])
  t.equal(checked.status, 0, checked.output)
})

t.test('the scrape config: one job per service, on its ops port, and the rules loaded', async (t) => {
  const file = path.join(OBSERVABILITY_DIR, 'prometheus.yml')
  const config = parse(readFileSync(file, 'utf8')) as { rule_files: string[]; scrape_configs: { job_name: string; dns_sd_configs: { names: string[]; port: number }[] }[] }
  const opsPorts: Record<string, number> = {
    gateway: loadConfig(gatewayEnv, TEST_SECRETS).GATEWAY_OPS_PORT,
    pricing: loadConfig(pricingEnv, TEST_SECRETS).PRICING_OPS_PORT,
    worker: loadConfig(workerEnv, TEST_SECRETS).WORKER_OPS_PORT,
    'webhook-sender': loadConfig(webhookSenderEnv, TEST_SECRETS).WEBHOOK_SENDER_OPS_PORT,
    console: loadConfig(consoleEnv, { ...TEST_SECRETS, CONSOLE_SESSION_SECRET: 'x'.repeat(32) }).CONSOLE_OPS_PORT,
    dispatcher: loadConfig(dispatcherEnv, TEST_SECRETS).DISPATCHER_OPS_PORT,
  }
  t.same(config.scrape_configs.map((job) => job.job_name).sort(), Object.keys(opsPorts).sort(), 'a job per service, named as the service')
  for (const job of config.scrape_configs) {
    t.same(job.dns_sd_configs.map((sd) => [sd.names, sd.port]), [[[job.job_name], opsPorts[job.job_name]]], `${job.job_name}: the compose service's replicas on ${opsPorts[job.job_name]}`)
  }
  t.same(config.rule_files.map((rules) => path.resolve(path.dirname(file), rules)), [RULES_FILE])
  if (!('path' in promtool)) return void t.comment(`promtool check skipped: ${promtool.missing}`)
  const checked = runPromtool(['check', 'config', file])
  t.equal(checked.status, 0, checked.output)
})

t.test('the Grafana dashboards: panels query the provisioned Prometheus data source', async (t) => {
  const datasources = parse(readFileSync(path.join(OBSERVABILITY_DIR, 'grafana/provisioning/datasources/courier.yml'), 'utf8')) as { datasources: { uid: string; type: string; url: string }[] }
  const prometheus = datasources.datasources.find((source) => source.type === 'prometheus')
  t.equal(prometheus?.uid, 'prometheus')
  t.equal(new URL(prometheus!.url).hostname, 'prometheus', 'the compose service')
  const all = dashboards()
  t.same([...all.keys()], ['courier-order-flow.json', 'courier-overview.json', 'courier-runtime.json'])
  const raw = [...all.values()].flatMap((dashboard) => dashboard.panels)
  for (const panel of raw.filter((panel) => panel.type !== 'row')) {
    t.equal(panel.datasource?.uid, 'prometheus', `${panel.title}: the Prometheus data source`)
    t.ok((panel.targets ?? []).length > 0 && panel.targets!.every((target) => target.expr.trim().length > 0), `${panel.title}: has queries`)
  }
  t.equal(new Set([...all.values()].map((dashboard) => dashboard.uid)).size, all.size, 'unique uids')
  for (const [file, dashboard] of all) t.match(dashboard.title, /^Courier: /, `${file}: titled ${dashboard.title}`)
  t.equal(new Set([...all.values()].map((dashboard) => dashboard.title)).size, all.size, 'a title each')
})
