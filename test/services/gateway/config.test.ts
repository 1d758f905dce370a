import { spawn } from 'node:child_process'
import path from 'node:path'
import t from 'tap'
import { TEST_INTERNAL_TOKEN } from '../../helpers/db.js'
import { childEnv, projectRoot } from '../../helpers/processes.js'

t.test('a bad environment value stops start-up with a message naming it', async (t) => {
  const run = (service: string, env: Record<string, string>) =>
    new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'services', service, 'main.js')], {
        cwd: projectRoot,
        env: childEnv({ LOG_LEVEL: 'silent', GATEWAY_PORT: '0', PRICING_PORT: '0', HOST: '127.0.0.1', INTERNAL_TOKEN: TEST_INTERNAL_TOKEN, ...env }),
      })
      let stderr = ''
      child.stderr.on('data', (chunk) => (stderr += chunk))
      // A process that accepted the value would listen forever: stop it so the test fails, not hangs.
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
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
  ]
  await Promise.all(cases.map(async ([service, env, variable]) => {
    const { code, stderr } = await run(service, env)
    t.equal(code, 1, `${service} with ${JSON.stringify(env)} exits 1`)
    t.match(stderr, new RegExp(`^${service}: Invalid configuration: .*\\b${variable}\\b`), `stderr names ${variable}: ${stderr.trim()}`)
  }))
})
