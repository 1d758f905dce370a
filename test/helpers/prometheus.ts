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
