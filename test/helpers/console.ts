import { createServer } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import consoleApp from '../../services/console/app.js'
import { consoleEnv, loadConfig } from '../../shared/config.js'
import { createConsoleUser } from '../../shared/console/users.js'
import type { ConsoleRole } from '../../shared/db/console-users.js'
import type { Sql } from '../../shared/db/sql.js'

export const TEST_SESSION_SECRET = 'test-console-session-secret-0123456789abcdef'
export const TEST_PASSWORD = 'a long enough password'

/**
 * The console as production builds it, on the test file's schema, listening on a free port of
 * 127.0.0.1 (a browser needs a real socket). `CONSOLE_PUBLIC_URL` is that address unless the
 * test sets its own (an https one turns the Secure cookie flag on).
 */
export async function startConsole(t: Test, env: Record<string, string>, extra: Record<string, string> = {}): Promise<{ app: FastifyInstance; url: string }> {
  const port = await freePort()
  const config = loadConfig(consoleEnv, {
    CONSOLE_SESSION_SECRET: TEST_SESSION_SECRET, CONSOLE_PUBLIC_URL: `http://localhost:${port}`,
    WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true', ...env, ...extra,
  })
  const app = Fastify({ logger: false, trustProxy: extra.TRUST_PROXY === 'true' })
  await app.register(consoleApp, { config })
  await app.listen({ port, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url: `http://localhost:${port}` }
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  await new Promise((resolve) => server.close(resolve))
  return typeof address === 'object' && address ? address.port : 0
}

/** A console user with a password already set through the one-time link, as a person would. */
export async function consoleUser(sql: Sql, consoleUrl: string, input: { email: string; role: ConsoleRole; businessId?: string }): Promise<{ email: string; link: string }> {
  const created = await createConsoleUser(sql, { email: input.email, role: input.role, businessId: input.businessId ?? null }, consoleUrl)
  if (created.kind !== 'created') throw new Error(created.message)
  return { email: created.user.email, link: created.link }
}
