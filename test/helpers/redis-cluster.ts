import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Test } from 'tap'
import { waitFor } from './processes.js'

/*
 * A real Redis Cluster of the test's own, from the installed redis-server: masters and their
 * replicas on free ports, data under a temp dir, every node killed and the dir removed when the
 * test ends (DESIGN 16).
 */

const run = promisify(execFile)

/** Why a cluster cannot be made on this machine (no redis-server or redis-cli), or null. */
export async function redisClusterMissing(): Promise<string | null> {
  for (const program of ['redis-server', 'redis-cli']) {
    const found = await run(program, ['--version']).then(() => true, () => false)
    if (!found) return `${program} is not installed: the Redis Cluster test needs redis-server and redis-cli (apt-get install redis-server)`
  }
  return null
}

export interface ClusterNode {
  port: number
  /** SIGKILL, as a crash: no shutdown, no failover of its own. */
  kill: () => Promise<void>
}

export interface RedisCluster {
  /** `host:port,…` of every node, as REDIS_CLUSTER_NODES takes it. */
  seeds: string
  nodes: ClusterNode[]
  /** `redis-cli -p port args…`, its output trimmed. */
  cli: (port: number, ...args: string[]) => Promise<string>
  /** The master serving `key`'s slot right now, and its replicas, by port. */
  ownerOf: (key: string) => Promise<{ master: number; replicas: number[] }>
  /** Whether every live node reports cluster_state:ok. */
  healthy: () => Promise<boolean>
}

/** A port free for the node and for its cluster bus (port + 10000), both below the ephemeral range others pick from. */
async function freeNodePort(taken: Set<number>): Promise<number> {
  const free = (port: number) => new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
  for (;;) {
    const port = 15000 + Math.floor(Math.random() * 7000)
    if (taken.has(port)) continue
    if ((await free(port)) && (await free(port + 10000))) {
      taken.add(port)
      return port
    }
  }
}

export async function startRedisCluster(t: Test, options: { masters: number; replicasPerMaster: number }): Promise<RedisCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'courier-redis-cluster-'))
  const children = new Map<number, ChildProcess>()
  const taken = new Set<number>()
  t.teardown(async () => {
    await Promise.all([...children.values()].map(stopChild))
    rmSync(dir, { recursive: true, force: true })
  })

  const cli = async (port: number, ...args: string[]) => (await run('redis-cli', ['-p', String(port), ...args], { timeout: 10000 })).stdout.trim()
  const count = options.masters * (1 + options.replicasPerMaster)
  const ports: number[] = []
  for (let i = 0; i < count; i++) ports.push(await freeNodePort(taken))
  for (const port of ports) {
    const nodeDir = path.join(dir, String(port))
    mkdirSync(nodeDir)
    const child = spawn('redis-server', [
      '--port', String(port), '--bind', '127.0.0.1', '--dir', nodeDir,
      '--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000',
      '--save', '', '--appendonly', 'no',
    ], { stdio: 'ignore' })
    children.set(port, child)
  }
  const up = await waitFor(async () => (await Promise.all(ports.map((port) => cli(port, 'ping').catch(() => '')))).every((answer) => answer === 'PONG'), 10000)
  if (!up) throw new Error(`the Redis Cluster nodes did not start on ${ports.join(', ')}`)
  await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', String(options.replicasPerMaster), '--cluster-yes'], { timeout: 30000 })

  const nodes = ports.map((port): ClusterNode => ({ port, kill: () => stopChild(children.get(port)!) }))
  const live = () => ports.filter((port) => { const child = children.get(port)!; return child.exitCode === null && child.signalCode === null })
  const healthy = async () => (await Promise.all(live().map((port) => cli(port, 'cluster', 'info').catch(() => '')))).every((info) => info.includes('cluster_state:ok'))
  const ownerOf = async (key: string) => {
    const [port] = live()
    const slot = Number(await cli(port!, 'cluster', 'keyslot', key))
    // CLUSTER NODES: id ip:port@bus flags master-id ping pong epoch link slot-ranges…, a line per node.
    const rows = (await cli(port!, 'cluster', 'nodes')).split('\n').map((line) => line.split(' '))
    const alive = rows.filter((row) => !row[2]!.includes('fail'))
    const master = alive.find((row) => row[2]!.includes('master') && row.slice(8).some((range) => {
      const [from, to = from] = range.split('-').map(Number)
      return slot >= from! && slot <= to!
    }))
    if (!master) throw new Error(`no live master serves slot ${slot}`)
    const portOf = (row: string[]) => Number(row[1]!.split('@')[0]!.split(':')[1])
    return { master: portOf(master), replicas: alive.filter((row) => row[3] === master[0]).map(portOf) }
  }
  // Every node agrees the cluster is whole and every replica has synced with its master.
  const ready = await waitFor(async () => {
    if (!(await healthy())) return false
    const roles = await Promise.all(ports.map((port) => cli(port, 'info', 'replication')))
    return roles.every((info) => info.includes('role:master') || info.includes('master_link_status:up'))
  }, 30000, 200)
  if (!ready) throw new Error('the Redis Cluster did not reach cluster_state:ok with its replicas in sync')
  return { seeds: ports.map((port) => `127.0.0.1:${port}`).join(','), nodes, cli, ownerOf, healthy }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGKILL')
  await exited
}
