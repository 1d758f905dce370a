import { readFileSync } from 'node:fs'
import path from 'node:path'
import { projectRoot } from '../../shared/project-root.js'

/**
 * The node arguments of a service's npm script (`start:gateway` is `node <args>`). The launcher
 * and the bench run each service with them, so a service runs with the same flags under
 * `npm start`, in its container, in compose and in Kubernetes (the manifests test holds those
 * to the scripts word for word).
 */
export function nodeArgsOf(script: string): string[] {
  const scripts: Record<string, string> = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts
  const [program, ...args] = (scripts[script] ?? '').split(/\s+/).filter(Boolean)
  if (program !== 'node') throw new Error(`npm script ${script} does not run node`)
  return args
}
