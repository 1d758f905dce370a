import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import type { Test } from 'tap'
import { freePort, waitFor } from './processes.js'

export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:PORT/<database>: trust auth, superuser. */
  url: (database: string) => string
  port: number
  /** Immediate shutdown, as a crash would be: no checkpoint, clients cut off. */
  stop: () => Promise<void>
  /** Starts again on the same port and data directory. */
  start: () => Promise<void>
}

// Postgres refuses to run as root, so every binary runs as the `postgres` OS user.
const POSTGRES_USER = 'postgres'

function binDir(): string {
  const root = '/usr/lib/postgresql'
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error(`no PostgreSQL under ${root}`)
  return path.join(root, versions[0]!, 'bin')
}

function asPostgres(command: string, args: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', POSTGRES_USER, '--', command, ...args] : [command, ...args]
}

function userIds(): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', POSTGRES_USER], { encoding: 'utf8' }).stdout.trim()
  const gid = spawnSync('id', ['-g', POSTGRES_USER], { encoding: 'utf8' }).stdout.trim()
  return { uid: Number(uid), gid: Number(gid) }
}

/**
 * A PostgreSQL server of the test's own on a free port, in a temporary data directory, so a test
 * can crash and restart it without touching the shared one. Removed when the test ends. Its
 * pg_hba (initdb's, trust) lets 127.0.0.1 connect for replication too, so a test can stand a
 * streaming replica beside it (`startStreamingReplica`).
 */
export async function startOwnPostgres(t: Test): Promise<OwnPostgres> {
  const bin = binDir()
  const dir = ownedTempDir()
  const data = path.join(dir, 'data')
  const [initCommand, ...initArgs] = asPostgres(path.join(bin, 'initdb'), ['-D', data, '-U', POSTGRES_USER, '--auth=trust', '--no-sync', '-E', 'UTF8'])
  const init = spawnSync(initCommand!, initArgs, { encoding: 'utf8' })
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`)
  return runPostgres(t, dir, await freePort())
}

/**
 * A hot standby of `primary` on a free port: `pg_basebackup -R -X stream` copies the primary's
 * whole cluster and writes the standby's settings, and the server then replays the primary's WAL
 * as it streams in, read-only. Stopped and removed when the test ends.
 */
export async function startStreamingReplica(t: Test, primary: OwnPostgres): Promise<OwnPostgres> {
  const dir = ownedTempDir()
  // A spread checkpoint would make it wait minutes for the primary's next one: --checkpoint=fast asks for one now.
  const [command, ...args] = asPostgres(path.join(binDir(), 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', POSTGRES_USER, '-D', path.join(dir, 'data'), '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync'])
  const backup = spawnSync(command!, args, { encoding: 'utf8', timeout: 60_000 })
  if (backup.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`pg_basebackup failed: ${backup.stderr}`)
  }
  return runPostgres(t, dir, await freePort())
}

/** A temporary directory the postgres OS user owns. */
function ownedTempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'courier-pg-'))
  if (process.getuid?.() === 0) {
    const { uid, gid } = userIds()
    chownSync(dir, uid, gid)
  }
  return dir
}

/** Runs the cluster in `dir`/data on `port` (its socket in `dir`), stops it and removes `dir` when the test ends. */
async function runPostgres(t: Test, dir: string, port: number): Promise<OwnPostgres> {
  const bin = binDir()
  const data = path.join(dir, 'data')
  let child: ChildProcess | null = null
  const url = (database: string) => `postgres://${POSTGRES_USER}@127.0.0.1:${port}/${database}`
  const ready = async () => {
    const probe = postgres(url('postgres'), { max: 1, connect_timeout: 1, onnotice: () => {} })
    try {
      await probe`select 1`
      return true
    } catch {
      return false
    } finally {
      await probe.end({ timeout: 1 })
    }
  }

  const start = async () => {
    // fsync off: a test server trades durability of the OS cache for speed; a crash of the
    // postgres process (what the tests inject) still loses nothing the OS holds.
    const [command, ...args] = asPostgres(path.join(bin, 'postgres'), ['-D', data, '-p', String(port), '-k', dir, '-h', '127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=200'])
    child = spawn(command!, args, { stdio: 'ignore' })
    if (!(await waitFor(ready, 15000, 100))) throw new Error(`own Postgres did not start on port ${port}`)
  }

  const stop = async () => {
    const running = child
    if (!running || running.exitCode !== null || running.signalCode !== null) return
    const [command, ...args] = asPostgres(path.join(bin, 'pg_ctl'), ['stop', '-D', data, '-m', 'immediate', '-w'])
    spawnSync(command!, args, { stdio: 'ignore' })
    if (running.exitCode === null && running.signalCode === null) await new Promise((resolve) => running.once('exit', resolve))
  }

  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  await start()
  return { url, port, stop, start }
}
