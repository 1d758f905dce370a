import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { parse } from 'yaml'
import { projectRoot } from './processes.js'

/** deploy/observability, where the scrape config, the rules and the dashboards live. */
export const OBSERVABILITY_DIR = path.join(projectRoot, 'deploy/observability')
export const RULES_FILE = path.join(OBSERVABILITY_DIR, 'rules/courier.rules.yml')
export const RULE_TESTS_FILE = path.join(OBSERVABILITY_DIR, 'rules/courier.rules.test.yml')
export const DASHBOARDS_DIR = path.join(OBSERVABILITY_DIR, 'grafana/dashboards')

/**
 * The path of a Debian `prometheus` package binary (`promtool`, `prometheus`), or a sentence
 * saying why it cannot be used: the tests that need it skip with that sentence, never install.
 */
export function findBinary(name: 'promtool' | 'prometheus'): { path: string } | { missing: string } {
  for (const candidate of [`/usr/bin/${name}`, `/usr/local/bin/${name}`]) {
    if (existsSync(candidate) && spawnSync(candidate, ['--version']).status === 0) return { path: candidate }
  }
  return { missing: `${name} is not installed (apt-get install prometheus puts it in /usr/bin; .ci/run does so when it can)` }
}

export interface Rule {
  record?: string
  alert?: string
  expr: string
  for?: string
  labels?: Record<string, string>
  annotations?: Record<string, string>
}
export interface RuleGroup {
  name: string
  rules: Rule[]
}

export const ruleGroups = (): RuleGroup[] => (parse(readFileSync(RULES_FILE, 'utf8')) as { groups: RuleGroup[] }).groups

export interface Panel {
  title: string
  type: string
  datasource?: { type: string; uid: string }
  targets?: { expr: string; legendFormat?: string }[]
}
export interface Dashboard {
  uid: string
  title: string
  panels: Panel[]
}

/** The Grafana dashboards, by file name. */
export function dashboards(): Map<string, Dashboard> {
  return new Map(readdirSync(DASHBOARDS_DIR).filter((name) => name.endsWith('.json')).sort().map((name) => [name, JSON.parse(readFileSync(path.join(DASHBOARDS_DIR, name), 'utf8')) as Dashboard]))
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/**
 * A Grafana dashboard as a Prometheus console template (Prometheus's own dashboards: served at
 * /consoles/<name>.html, drawn by its prom_console.js): the same rows, panel titles, queries and
 * legends, each panel a graph over the last `durationS` seconds with its queries printed under it. Grafana's
 * `{{label}}` legends become the console library's `[[label]]`.
 */
export function consoleTemplate(dashboard: Dashboard, durationS: number): string {
  const blocks: string[] = []
  let graph = 0
  const scripts: string[] = []
  for (const panel of dashboard.panels) {
    if (panel.type === 'row') {
      blocks.push(`</div><h4 class="row-title">${escapeHtml(panel.title)}</h4><div class="grid">`)
      continue
    }
    const targets = panel.targets ?? []
    const id = `graph${graph++}`
    blocks.push(`<div class="panel"><h6>${escapeHtml(panel.title)}</h6><div id="${id}"></div><pre>${targets.map((target) => escapeHtml(target.expr.replace(/\s+/g, ' ').trim())).join('\n')}</pre></div>`)
    scripts.push(`new PromConsole.Graph(Object.assign(${JSON.stringify({
      expr: targets.map((target) => target.expr),
      name: targets.map((target) => (target.legendFormat ?? '').replace(/\{\{\s*(\w+)\s*\}\}/g, '[[$1]]') || null),
      duration: durationS,
      height: 150,
      xTitle: '',
    })}, { node: document.getElementById(${JSON.stringify(id)}) }))`)
  }
  const assets = ['rickshaw/rickshaw.min.css', 'bootstrap4/css/bootstrap.min.css', 'css/prom_console.css']
  const js = ['d3/d3.min.js', 'rickshaw/rickshaw.min.js', 'jquery/jquery.min.js', 'js/prom_console.js']
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(dashboard.title)}</title>
${assets.map((file) => `<link rel="stylesheet" href="{{ pathPrefix }}/classic/static/${file}">`).join('\n')}
<script>var PATH_PREFIX = "{{ pathPrefix }}";</script>
${js.map((file) => `<script src="{{ pathPrefix }}/classic/static/${file}"></script>`).join('\n')}
<style>
body { padding: 12px 16px; font-size: 13px; }
.grid { display: grid; grid-template-columns: repeat(3, 1fr); gap: 10px 18px; }
.panel { min-width: 0; border: 1px solid #ddd; border-radius: 4px; padding: 6px 8px; }
.panel pre { font-size: 10px; white-space: pre-wrap; color: #555; margin: 4px 0 0; }
h4.row-title { margin: 14px 0 6px; font-size: 15px; }
h6 { font-weight: 600; }
</style></head>
<body>
<h3>${escapeHtml(dashboard.title)}</h3>
<p class="text-muted">Prometheus console rendering of the Grafana dashboard's queries (deploy/observability/grafana/dashboards).</p>
<div class="grid">${blocks.join('\n')}</div>
<script>
${scripts.join('\n')}
</script>
</body></html>
`
}
