import type { Db } from './sql.js'

// @fastify/session's store, in Postgres so every console replica sees every session, each kept
// by the hash of its id (`secretHash`, services/console/session-store.ts): the column `id` holds
// that hash (migration 00034).

export async function findSession(db: Db, idHash: string): Promise<unknown> {
  const [row] = await db<{ data: unknown }[]>`select data from console_sessions where id = ${idHash} and expires_at > now()`
  return row?.data ?? null
}

export async function saveSession(db: Db, idHash: string, data: unknown, expiresAt: Date): Promise<void> {
  await db`
    insert into console_sessions (id, data, expires_at) values (${idHash}, ${JSON.stringify(data)}::text::jsonb, ${expiresAt})
    on conflict (id) do update set data = excluded.data, expires_at = excluded.expires_at`
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db`delete from console_sessions where id = ${idHash}`
}

/** Ends every session of one user (disabled, a new password, or "log out everywhere"); returns how many. */
export async function deleteUserSessions(db: Db, userId: string): Promise<number> {
  const rows = await db`delete from console_sessions where data ->> 'userId' = ${userId} returning id`
  return rows.length
}

export async function deleteExpiredSessions(db: Db): Promise<number> {
  const rows = await db`delete from console_sessions where expires_at <= now() returning id`
  return rows.length
}
