import { spawn } from 'node:child_process'
import path from 'node:path'
import type { TestDb } from './db.js'
import { childEnv, projectRoot } from './processes.js'

const builtCli = path.join(projectRoot, 'dist', 'services', 'operator-cli', 'main.js')

export interface CliRun {
  code: number | null
  stdout: string
  stderr: string
  /** stdout parsed as the one JSON object the contract promises; undefined when it is not one. */
  json: any
}

/**
 * Runs the built CLI as an operator would (`npm test` builds first), against the test file's
 * own schema and queue prefix.
 */
export function runOperatorCli(db: Pick<TestDb, 'env'>, args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli, ...args], { env: childEnv({ ...db.env, ...env }), cwd: projectRoot })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      let json: unknown
      try {
        json = JSON.parse(stdout)
      } catch {
        json = undefined
      }
      resolve({ code, stdout, stderr, json })
    })
  })
}
