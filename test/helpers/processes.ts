import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Test } from 'tap'
import { errorCode } from '../../shared/errors/error-message.js'

// This file is test/helpers/processes.ts, or dist/test/helpers/processes.js as `npm test` runs it.
const helpers = path.dirname(fileURLToPath(import.meta.url))
export const projectRoot = path.basename(path.resolve(helpers, '../..')) === 'dist' ? path.resolve(helpers, '../../..') : path.resolve(helpers, '../..')

/**
 * The kernel's ephemeral range (`ip_local_port_range`): the ports it hands to `listen(0)` and to
 * every outgoing connection's local end. A port taken from it and closed again can be given to a
 * pool's new connection to Postgres or Redis (of this file or of the one running beside it)
 * before the service the test starts binds it: a launcher test once failed on `port … is already
 * in use` so. Test ports come from below that range, where nothing is handed out by itself.
 */
function ephemeralStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(start) && start > 2048 ? start : 32768
  } catch {
    return 32768
  }
}
const PORTS_FROM = 10_000
const PORTS_BELOW = Math.max(PORTS_FROM + 1000, ephemeralStart())
const handedOut = new Set<number>()

/**
 * Ports handed out by any test process on this machine, one file per port holding the pid that
 * took it: the test files tap runs side by side (and two checkouts' suites) pick from the same
 * range, and a port one of them checked and closed could be bound by the other's service before
 * its own service binds it. A file whose process is gone is taken over; this process's are removed
 * when it exits.
 */
const RESERVED_DIR = path.join(os.tmpdir(), 'courier-test-ports')
try {
  mkdirSync(RESERVED_DIR, { recursive: true })
} catch {
  // Not writable here: `reserve` reserves nothing, and the bind check alone remains.
}
process.once('exit', () => { for (const port of handedOut) rmSync(path.join(RESERVED_DIR, String(port)), { force: true }) })

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return errorCode(err) === 'EPERM'
  }
}

function holderOf(file: string): number {
  try {
    return Number(readFileSync(file, 'utf8'))
  } catch {
    return 0
  }
}

/** Marks the port as this process's, unless a live test process holds it (a directory not writable here reserves nothing). */
function reserve(port: number): boolean {
  const file = path.join(RESERVED_DIR, String(port))
  for (let tries = 0; tries < 2; tries++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' })
      return true
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') return true
      // Empty or gone: another process is writing or removing it now; leave the port to it.
      const holder = holderOf(file)
      if (!(Number.isInteger(holder) && holder > 0) || alive(holder)) return false
      rmSync(file, { force: true })
    }
  }
  return false
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

/**
 * A port nobody listens on right now, below the ephemeral range and not handed out before by this
 * or another live test process: picked at random, reserved, and checked by binding it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PORTS_FROM + Math.floor(Math.random() * (PORTS_BELOW - PORTS_FROM))
    if (handedOut.has(port) || !reserve(port)) continue
    handedOut.add(port)
    if (await bindable(port)) return port
  }
}

/**
 * The environment of a project process a test starts: the test's own, with `env` over it, and
 * without the loader tap puts in NODE_OPTIONS for its children, which doubles the cost of every
 * start (nothing here collects coverage).
 */
export function childEnv(env: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return { ...process.env, NODE_OPTIONS: '', ...env }
}

/** Runs a built service (`npm test` builds before tap starts) and kills it when the test ends. */
export function startBuiltService(t: Test, entry: string, env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, [path.join(projectRoot, 'dist', entry)], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout?.resume()
  child.stderr?.resume()
  t.teardown(() => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') })
  return child
}

/**
 * A Redis server of the test's own on a free port, so a test can stop and restart it without
 * touching the shared one.
 */
export async function startOwnRedis(t: Test, port?: number, options: { cluster?: boolean } = {}): Promise<{ url: string; port: number; stop: () => Promise<void> }> {
  const chosen = port ?? (await freePort())
  // A one-node cluster still enforces slots: a multi-key command across slots fails with CROSSSLOT.
  const nodesFile = path.join(os.tmpdir(), `courier-test-nodes-${chosen}.conf`)
  const clusterArgs = options.cluster ? ['--cluster-enabled', 'yes', '--cluster-announce-ip', '127.0.0.1', '--cluster-config-file', nodesFile] : []
  const child = spawn('redis-server', ['--port', String(chosen), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...clusterArgs], { stdio: 'ignore' })
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    child.kill('SIGKILL')
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)))
    if (options.cluster) rmSync(nodesFile, { force: true })
  }
  t.teardown(stop)
  await waitFor(async () => {
    const { Redis } = await import('ioredis')
    const probe = new Redis(`redis://127.0.0.1:${chosen}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    probe.on('error', () => {})
    try {
      await probe.connect()
      if (!options.cluster) return (await probe.ping()) === 'PONG'
      if (!String(await probe.call('CLUSTER', 'INFO')).includes('cluster_slots_assigned:16384')) await probe.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383')
      return String(await probe.call('CLUSTER', 'INFO')).includes('cluster_state:ok')
    } catch {
      return false
    } finally {
      probe.disconnect()
    }
  }, 5000)
  return { url: `redis://127.0.0.1:${chosen}`, port: chosen, stop }
}

/** Polls until `check` holds or the time runs out; returns whether it held. */
export async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  return false
}

/**
 * Probes until `done` holds for the probed value or the time runs out; returns whether it held
 * and the last value, so the caller asserts both the wait and what it saw.
 */
export async function waitForValue<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, everyMs = 20): Promise<{ held: boolean; value: T }> {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, everyMs))
    value = await probe()
  }
  return { held: done(value), value }
}

/**
 * A dependency that accepts connections and never answers (a hung pricing, geocoder or
 * receiver). `hangUp` ends every connection it holds, so the caller's pending request fails
 * and its client can close; the teardown does the same and stops listening.
 */
export async function startSilentServer(t: Test): Promise<{ url: string; hangUp: () => void; connections: () => number }> {
  const sockets: Socket[] = []
  const silent = createServer((socket) => { sockets.push(socket) })
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
  const hangUp = () => { for (const socket of sockets) socket.destroy() }
  t.teardown(() => {
    hangUp()
    return new Promise<void>((resolve) => silent.close(() => resolve()))
  })
  const address = silent.address()
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, hangUp, connections: () => sockets.length }
}
