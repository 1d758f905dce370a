import type { Db, Tx } from './sql.js'

/** One operator action: who did what to which thing, with the state before and after. */
export interface AuditEntry {
  actor: string
  action: string
  businessId: string | null
  subject: string
  before: unknown
  after: unknown
}

export interface StoredAuditEntry extends AuditEntry {
  id: number
  at: Date
}

/** Written in the transaction of the action it records, so neither stands without the other. */
export async function insertAudit(tx: Tx, entry: AuditEntry): Promise<void> {
  await tx`
    insert into audit_log (actor, action, business_id, subject, before, after)
    values (${entry.actor}, ${entry.action}, ${entry.businessId}, ${entry.subject},
            ${JSON.stringify(entry.before)}::text::jsonb, ${JSON.stringify(entry.after)}::text::jsonb)`
}

export async function listAudit(db: Db, filter: { businessId: string | null; beforeId: number | null; limit: number }): Promise<StoredAuditEntry[]> {
  return db<StoredAuditEntry[]>`
    select id, at, actor, action, business_id, subject, before, after from audit_log
    where true
      ${filter.businessId ? db`and business_id = ${filter.businessId}` : db``}
      ${filter.beforeId !== null ? db`and id < ${filter.beforeId}` : db``}
    order by id desc limit ${filter.limit}`
}
