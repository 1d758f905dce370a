import type { FastifyServerOptions } from 'fastify'

/**
 * `TRUST_PROXY` as fastify takes it. A number of hops becomes the function fastify builds for it
 * at run time (its types leave numbers out). Off by default: the socket address is the client.
 */
export function trustProxyOption(value: boolean | number | string[]): FastifyServerOptions['trustProxy'] {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value
}
