import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import t from 'tap'
import { childEnv, projectRoot } from '../helpers/processes.js'

// A smoke test of `npm run bench`, not a benchmark: two seconds of the quote, courier and
// placement cases and a small webhooks burst must run without an error, print their table and
// write their figures. No timing is asserted.
t.test('the bench runs for two seconds and reports', async (t) => {
  const resultsDir = mkdtempSync(path.join(os.tmpdir(), 'courier-bench-'))
  t.teardown(() => rmSync(resultsDir, { recursive: true, force: true }))
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist', 'test', 'bench', 'run.js')], {
    cwd: projectRoot,
    env: childEnv({
      BENCH_SECONDS: '2',
      BENCH_ROUNDS: '1',
      // A second of warm-up opens the pools and compiles the hot paths, so a busy machine (other
      // test files run beside this one) still sees answers within the measured second.
      BENCH_WARMUP: '1',
      BENCH_CASES: 'quote,courier-location,dispatch,place-1,place-1-ten,webhooks',
      BENCH_WEBHOOK_EVENTS: '200',
      // Few couriers, few placements: the cases' paths, not their scale.
      BENCH_LOCATION_COURIERS: '3000',
      BENCH_DISPATCH_COURIERS: '20',
      BENCH_DISPATCH_RATE: '10',
      BENCH_DISPATCH_DEADLINE_S: '5',
      // Its own schemas and Redis prefix, so it can run beside a real bench run or another test.
      BENCH_ID: `smoke_${randomBytes(4).toString('hex')}`,
      BENCH_RESULTS_DIR: resultsDir,
    }),
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve))

  t.equal(code, 0, `bench exits 0\n${stderr}`)
  t.match(stdout, /^\| quote\s+\| 50\s+\| project\s+\| \d+ quotes\/s/m, 'prints the quote row')
  t.match(stdout, /^\| courier-location\s+\| 50\s+\| project\s+\| \d+ pings\/s/m, 'prints the location row')
  t.match(stdout, /^\| dispatch\s+\| 20\s+\| project\s+\| \d+ placements\/s/m, 'prints the dispatch row')
  t.match(stdout, /^\| place-1\s+\| 32\s+\| project\s+\| \d+ orders\/s/m, 'prints the placement row')
  t.match(stdout, /^\| webhooks\s+\| 128\s+\| project\s+\| \d+ deliveries\/s/m, "prints the webhooks row, conns the sender's concurrency")
  t.match(stdout, /^\| quote\s+\| 50\s+\| bare\s+\| \d+ quotes\/s/m, 'prints the bare stack\'s row beside the same-work baseline\'s')
  t.match(stdout, /^\| courier-location\s+\| 50\s+\| same-work\s+\| \d+ pings\/s/m, "prints the location case's same-work row")
  t.match(stdout, /gateway peak RSS: \d+ MB \(target <= 120 MB: (yes|NO)\), \d+ MB at rest/, 'prints the gateway peak memory and its memory at rest')
  t.match(stdout, /baseline fronts' RSS at rest \/ peak .*: quote-front \d+ \/ \d+ MB, place-front \d+ \/ \d+ MB, location \d+ \/ \d+ MB/, "prints the baseline fronts' memory beside it")

  const files = readdirSync(resultsDir).filter((name) => name.endsWith('.json'))
  t.equal(files.length, 1, 'writes one JSON file')
  const report = JSON.parse(readFileSync(path.join(resultsDir, files[0]), 'utf8'))
  t.type(report.gatewayPeakRssMb, 'number')
  t.equal(report.memory.gateway.peakMb, report.gatewayPeakRssMb, 'the memory figures carry the peak the verdict judged')
  t.same(Object.keys(report.memory.fronts), ['quote-front', 'place-front', 'location'], 'one entry per baseline front')
  for (const resident of [report.memory.gateway, ...Object.values<{ restMb: number; peakMb: number }>(report.memory.fronts)]) {
    t.ok(resident.restMb > 0 && resident.peakMb > 0, `memory at rest ${resident.restMb} MB, at peak ${resident.peakMb} MB, both read`)
  }
  t.same(report.cases.map((entry: { name: string }) => entry.name), ['quote', 'courier-location', 'dispatch', 'place-1', 'place-1-ten', 'webhooks'])
  for (const entry of report.cases) {
    // Both columns: a same-work baseline where one is built, the bare stack for all but dispatch, whose target is absolute.
    t.equal(entry.baseline !== undefined, ['quote', 'courier-location', 'place-1', 'place-1-ten'].includes(entry.name), `${entry.name} has a same-work baseline where one is built`)
    t.equal(entry.bare === undefined, entry.name === 'dispatch', `${entry.name} has a bare-stack side unless it is dispatch`)
    for (const side of [entry.baseline, entry.bare, entry.project].filter(Boolean)) {
      for (const field of ['requestsPerSecond', 'unitsPerSecond', 'p50Ms', 'p99Ms', 'non2xx']) t.type(side.best[field], 'number', `${entry.name} ${field} is a number`)
      t.ok(side.best.requests > 0, `${entry.name} answered requests`)
      if (entry.name === 'dispatch') t.ok(side.best.dispatch.placed > 0, 'dispatch placed orders')
      for (const share of ['machine', 'postgres', 'redis-server']) t.type(side.best.cpu[share], 'number', `${entry.name} reports the ${share} CPU it took`)
    }
  }
})
