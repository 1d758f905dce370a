/*
 * `npm start -- --replicas gateway=2,worker=3`: how many processes of each service the launcher
 * runs. Each replica listens on ports of its own: replica n (from 1) takes the service's port
 * and ops port plus 10·(n−1), so with the defaults gateway #2 serves on 3010 (ops 9474), worker
 * #3 on 3022 (ops 9486). Nothing spreads requests over the gateways: each is its own address,
 * printed at start-up; in production the Service or load balancer in front of them does that.
 */

export const SERVICE_NAMES = ['pricing', 'worker', 'webhook-sender', 'console', 'dispatcher', 'gateway'] as const
export type ServiceName = (typeof SERVICE_NAMES)[number]

/** How far apart the ports of one service's replicas are. */
export const PORT_STEP = 10
const MAX_REPLICAS = PORT_STEP - 1

/** What is wrong with the command line; the launcher prints it and exits 1. */
export class ReplicasError extends Error {
  override name = 'ReplicasError'
}

function isServiceName(name: string): name is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(name)
}

/**
 * The replica count of every service (1 unless named) from the launcher's arguments:
 * `--replicas a=2,b=3` or `--replicas=a=2,b=3`.
 */
export function replicasFromArgs(args: string[]): Record<ServiceName, number> {
  const counts: Record<ServiceName, number> = { pricing: 1, worker: 1, 'webhook-sender': 1, console: 1, dispatcher: 1, gateway: 1 }
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    let value: string | undefined
    if (arg === '--replicas') value = args[++i]
    else if (arg.startsWith('--replicas=')) value = arg.slice('--replicas='.length)
    else throw new ReplicasError(`unknown argument ${arg} (the launcher takes --replicas service=count,…)`)
    if (!value) throw new ReplicasError('--replicas needs service=count,… (for example gateway=2,worker=3)')
    for (const entry of value.split(',').filter((part) => part.trim() !== '')) {
      const [name = '', count = ''] = entry.trim().split('=')
      if (!isServiceName(name)) throw new ReplicasError(`--replicas: unknown service ${name} (one of ${SERVICE_NAMES.join(', ')})`)
      if (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > MAX_REPLICAS) throw new ReplicasError(`--replicas: ${name} needs a count from 1 to ${MAX_REPLICAS}, not ${count || 'nothing'}`)
      counts[name] = Number(count)
    }
  }
  return counts
}

/** The port replica `n` (from 1) of a service listens on, given the service's own; 0 (any free port) stays 0. */
export function replicaPort(base: number, n: number): number {
  if (base === 0) return 0
  const port = base + PORT_STEP * (n - 1)
  if (port > 65535) throw new ReplicasError(`replica ${n} would listen on port ${port}, above 65535: lower the service's port`)
  return port
}

/** The name a replica goes by in the launcher's lines: the service's for the first, `gateway#2` for the next. */
export function replicaName(service: ServiceName, n: number): string {
  return n === 1 ? service : `${service}#${n}`
}
