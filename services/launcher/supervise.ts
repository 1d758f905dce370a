import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

/** One service the launcher runs: a name for its log prefix and the built entry it starts. */
export interface ServiceSpec {
  name: string
  /** Arguments to node: the service's npm script without its `node` (scripts.ts). */
  args: string[]
  /** Variables this service gets on top of the launcher's own environment. */
  env?: Record<string, string>
  /** Its `/healthz`: a process alive but frozen (an endless loop) stops answering and is restarted. */
  healthUrl?: string
}

/**
 * How often each child's `/healthz` is asked, and how many unanswered asks in a row mean it is
 * frozen; `earlyExitMs`: an exit this soon after starting counts as a failed start even from a
 * child that answered (EARLY_EXIT_MS unless given).
 */
export interface LivenessOptions {
  intervalMs: number
  timeoutMs: number
  misses: number
  earlyExitMs?: number
}

// A live service answers `/healthz` from its event loop within milliseconds; three misses of
// 2 s each, 5 s apart, mean nothing runs there any more.
const LIVENESS: LivenessOptions = { intervalMs: 5000, timeoutMs: 2000, misses: 3 }

const FIRST_DELAY_MS = 1000
const MAX_DELAY_MS = 30_000
// A child that stayed up this long was healthy: its next crash starts the backoff afresh.
const HEALTHY_AFTER_MS = 60_000
// A child that dies this soon, or before it ever answered its `/healthz` (however long its start
// took on a busy machine), this many times in a row, cannot start (a port in use, bad config):
// restarting it would only loop, so the launcher gives up and says why.
const EARLY_EXIT_MS = 5000
const EARLY_EXITS_TO_GIVE_UP = 3

interface Supervised {
  spec: ServiceSpec
  child: ChildProcess | null
  startedAt: number
  delayMs: number
  earlyExits: number
  restart: NodeJS.Timeout | null
  missed: number
}

/**
 * Runs each service as its own process and keeps it running: one that dies is started again
 * after 1 s, 2 s, 4 s … (at most 30 s) while the others keep serving. `stop` ends them all.
 * `onGiveUp` is called when a service cannot start at all (its own last lines say why).
 */
export function supervise(specs: ServiceSpec[], onGiveUp: (name: string) => void, liveness: LivenessOptions = LIVENESS) {
  let stopping = false
  const earlyExitMs = liveness.earlyExitMs ?? EARLY_EXIT_MS
  const services: Supervised[] = specs.map((spec) => ({ spec, child: null, startedAt: 0, delayMs: FIRST_DELAY_MS, earlyExits: 0, restart: null, missed: 0 }))

  function start(service: Supervised) {
    service.restart = null
    const child = spawn(process.execPath, service.spec.args, {
      env: { ...process.env, ...service.spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    service.child = child
    service.startedAt = Date.now()
    service.missed = 0
    console.log(`launcher: ${service.spec.name} started (pid ${child.pid})`)
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => console.log(`[${service.spec.name}] ${line}`))
    }
    child.on('exit', (code, signal) => onExit(service, child, signal ?? String(code)))
  }

  function onExit(service: Supervised, child: ChildProcess, how: string) {
    service.child = null
    if (stopping) return
    const upMs = Date.now() - service.startedAt
    if (upMs >= HEALTHY_AFTER_MS) service.delayMs = FIRST_DELAY_MS
    const neverServed = service.spec.healthUrl !== undefined && !answered.has(child) && upMs < HEALTHY_AFTER_MS
    service.earlyExits = upMs < earlyExitMs || neverServed ? service.earlyExits + 1 : 0
    if (service.earlyExits >= EARLY_EXITS_TO_GIVE_UP) {
      console.error(`launcher: ${service.spec.name} exited (${how}) ${service.earlyExits} times in a row before it served, or within ${earlyExitMs / 1000} s of starting; giving up`)
      onGiveUp(service.spec.name)
      return
    }
    const delay = service.delayMs
    console.error(`launcher: ${service.spec.name} exited (${how}); restarting in ${delay / 1000} s`)
    service.delayMs = Math.min(delay * 2, MAX_DELAY_MS)
    service.restart = setTimeout(() => start(service), delay)
  }

  /*
   * A child that has answered `/healthz` once and then misses `misses` asks in a row is killed
   * (SIGKILL: a frozen event loop never runs a SIGTERM handler), and the exit path restarts it.
   * One that has not answered yet is still starting: the early-exit rule covers that.
   */
  const answered = new WeakSet<ChildProcess>()
  async function checkLiveness(service: Supervised) {
    const child = service.child
    if (!child || !service.spec.healthUrl || stopping) return
    const alive = await fetch(service.spec.healthUrl, { signal: AbortSignal.timeout(liveness.timeoutMs) }).then((response) => response.ok, () => false)
    if (service.child !== child || stopping) return
    if (alive) {
      answered.add(child)
      service.missed = 0
      return
    }
    if (!answered.has(child)) return
    service.missed += 1
    if (service.missed < liveness.misses) return
    console.error(`launcher: ${service.spec.name} did not answer ${service.spec.healthUrl} ${service.missed} times in a row; killing it (pid ${child.pid}) to restart it`)
    child.kill('SIGKILL')
  }
  const watch = setInterval(() => {
    for (const service of services) void checkLiveness(service)
  }, liveness.intervalMs)
  watch.unref()

  for (const service of services) start(service)

  return {
    /** SIGTERM to every running service, pending restarts cancelled; resolves once all have exited. */
    async stop(): Promise<void> {
      stopping = true
      clearInterval(watch)
      await Promise.all(services.map((service) => {
        if (service.restart) clearTimeout(service.restart)
        const child = service.child
        if (!child || child.exitCode !== null || child.signalCode !== null) return null
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        return exited
      }))
    },
  }
}
