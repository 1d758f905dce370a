import { execFile } from 'node:child_process'
import net from 'node:net'
import os from 'node:os'
import { promisify } from 'node:util'
import type { LauncherConfig } from '../../shared/config.js'

const run = promisify(execFile)

/*
 * `npm start` on a machine where PostgreSQL or Redis is installed but stopped: each one the
 * configuration places on this machine and that does not answer is started the way .ci/run
 * starts it. When that is not possible, the launcher stops with the one command that would do
 * it. Anything at another address is left alone: it is someone else's to run.
 */

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** Why a dependency could not be made to answer, with the command that would. */
export class DependencyDownError extends Error {}

interface Endpoint {
  host: string
  port: number
}

function endpointOf(url: string, defaultPort: number): Endpoint {
  const parsed = new URL(url)
  return { host: parsed.hostname, port: parsed.port ? Number(parsed.port) : defaultPort }
}

/** Where the Redis the configuration names is, `host:port` (each seed node of a cluster), without its credentials. */
export function redisWhere(config: Pick<LauncherConfig, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): string {
  return (config.REDIS_CLUSTER_NODES ?? [endpointOf(config.REDIS_URL, 6379)]).map(({ host, port }) => `${host}:${port}`).join(',')
}

/** Whether something accepts a TCP connection at `host:port` within `timeoutMs`. */
export function answers({ host, port }: Endpoint, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: host.replace(/^\[|\]$/g, ''), port })
    const done = (up: boolean) => { socket.destroy(); resolve(up) }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

async function answersWithin(endpoint: Endpoint, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await answers(endpoint)) return true
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return false
}

/** The Debian cluster (`pg_lsclusters`) that listens on `port`, if this machine has one. */
async function clusterOnPort(port: number): Promise<{ version: string; name: string } | null> {
  const listed = await run('pg_lsclusters', ['--no-header']).catch(() => null)
  for (const line of listed?.stdout.split('\n') ?? []) {
    const [version, name, clusterPort] = line.trim().split(/\s+/)
    if (Number(clusterPort) === port) return { version, name }
  }
  return null
}

async function ensurePostgres(endpoint: Endpoint): Promise<string | null> {
  if (await answers(endpoint)) return null
  const cluster = await clusterOnPort(endpoint.port)
  const command = cluster
    ? `pg_ctlcluster --skip-systemctl-redirect ${cluster.version} ${cluster.name} start`
    : 'pg_ctlcluster --skip-systemctl-redirect <version> main start (or docker compose up -d postgres)'
  if (cluster) {
    await run('pg_ctlcluster', ['--skip-systemctl-redirect', cluster.version, cluster.name, 'start']).catch(() => undefined)
    if (await answersWithin(endpoint, 30_000)) return `PostgreSQL was not running; started cluster ${cluster.version}/${cluster.name}`
  }
  throw new DependencyDownError(`PostgreSQL does not answer at ${endpoint.host}:${endpoint.port}. Start it with: ${command}`)
}

async function ensureRedis(endpoint: Endpoint): Promise<string | null> {
  if (await answers(endpoint)) return null
  const args = ['--daemonize', 'yes', '--bind', '127.0.0.1', '--port', String(endpoint.port), '--save', '', '--appendonly', 'no', '--dir', os.tmpdir()]
  const started = await run('redis-server', args).then(() => true, () => false)
  if (started && (await answersWithin(endpoint, 15_000))) return `Redis was not running; started redis-server on port ${endpoint.port}`
  throw new DependencyDownError(`Redis does not answer at ${endpoint.host}:${endpoint.port}. Start it with: redis-server --daemonize yes --port ${endpoint.port} (or docker compose up -d redis)`)
}

/**
 * Starts what is local and stopped; returns what it did, one line each. A Redis Cluster
 * (`REDIS_CLUSTER_NODES`) is the operator's to run: it is never started here.
 */
export async function ensureLocalDependencies(config: Pick<LauncherConfig, 'DATABASE_URL' | 'REDIS_URL' | 'REDIS_CLUSTER_NODES'>): Promise<string[]> {
  const postgres = endpointOf(config.DATABASE_URL, 5432)
  const redis = endpointOf(config.REDIS_URL, 6379)
  const postgresStarted = LOCAL_HOSTS.has(postgres.host) ? await ensurePostgres(postgres) : null
  const redisStarted = !config.REDIS_CLUSTER_NODES && LOCAL_HOSTS.has(redis.host) ? await ensureRedis(redis) : null
  return [postgresStarted, redisStarted].filter((line) => line !== null)
}
