import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { projectRoot } from '../helpers/processes.js'

export interface Child {
  name: string
  process: ChildProcess
  /** Last lines it wrote, shown if it dies. */
  lines: string[]
  /** Stopped on purpose before the bench ends. */
  stopped?: boolean
}

const children: Child[] = []

/**
 * Runs a node script as its own process (its own core, as in production). Its output is
 * kept quiet unless BENCH_VERBOSE is set, and shown when it dies before the bench ends.
 */
export function startNode(name: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const entry: Child = { name, process: child, lines: [] }
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      entry.lines.push(line)
      if (entry.lines.length > 50) entry.lines.shift()
      if (process.env.BENCH_VERBOSE) process.stderr.write(`[${name}] ${line}\n`)
    })
  }
  child.on('exit', (code, signal) => {
    if (stopping || entry.stopped) return
    process.stderr.write(`bench: ${name} exited (${signal ?? code})\n${entry.lines.map((line) => `[${name}] ${line}`).join('\n')}\n`)
    process.exitCode = 1
  })
  children.push(entry)
  return entry
}

let stopping = false

/** Stops every child this bench started (SIGTERM, then SIGKILL after a grace period). */
export async function stopAll(): Promise<void> {
  stopping = true
  await Promise.all(children.map((entry) => stop(entry)))
}

/** Stops one child before the others (a service only one case needs), as stopAll would. */
export async function stop(entry: Child): Promise<void> {
  entry.stopped = true
  const child = entry.process
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), 8000)
  await exited
  clearTimeout(timer)
}

export { freePort } from '../helpers/processes.js'

/** Polls `url` until it answers 200. */
export async function waitReady(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await fetch(url).then((response) => response.ok, () => false)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${url} did not become ready within ${timeoutMs} ms`)
}

/** Peak resident set (VmHWM) of a process, in MB, as the kernel recorded it. */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmHWM:\s+(\d+) kB/.exec(status)
  return match ? Number(match[1]) / 1024 : NaN
}

/** Current resident set (VmRSS) in MB. */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const match = /VmRSS:\s+(\d+) kB/.exec(status)
  return match ? Number(match[1]) / 1024 : NaN
}

/** CPU seconds (user + system) a process has used so far; clock ticks are 100 a second on Linux. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds so far of every process whose command is one of `commands`, summed per command. */
export function cpuSecondsByCommand(commands: string[]): Record<string, number> {
  const totals: Record<string, number> = Object.fromEntries(commands.map((command) => [command, 0]))
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      if (command in totals) totals[command] += cpuSeconds(Number(entry))
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return totals
}

/** CPU seconds the whole machine has been busy (every core, every process: user, system, interrupts), from /proc/stat. */
export function machineCpuSeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number)
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100
}
