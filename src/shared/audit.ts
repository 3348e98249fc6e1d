// Audit rows, written in the same transaction as the change they record.
import type { Executor } from '../db/db.js';
import { actorIdOf, type Actor } from './context.js';
import { newId } from './ids.js';

export interface AuditEntry {
  action: string;
  orgId?: string | null;
  accountId?: string | null;
  entityType?: string;
  entityId?: string;
  details?: Record<string, unknown>;
}

export async function writeAudit(tx: Executor, actor: Actor, entry: AuditEntry): Promise<void> {
  await tx.query(
    `INSERT INTO audit_log (id, org_id, account_id, actor_type, actor_id, action, entity_type, entity_id, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [newId(), entry.orgId ?? null, entry.accountId ?? null, actor.type, actorIdOf(actor), entry.action,
      entry.entityType ?? null, entry.entityId ?? null, JSON.stringify(entry.details ?? {})]);
}

/** Many audit rows in one statement (a bulk write records each entity it touched). */
export async function writeAuditMany(tx: Executor, actor: Actor, entries: readonly AuditEntry[]): Promise<void> {
  if (!entries.length) return;
  await tx.query(
    `INSERT INTO audit_log (id, org_id, account_id, actor_type, actor_id, action, entity_type, entity_id, details)
     SELECT e.id, e.org_id, e.account_id, $1, $2, e.action, e.entity_type, e.entity_id, e.details
       FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::jsonb[])
         AS e(id, org_id, account_id, action, entity_type, entity_id, details)`,
    [actor.type, actorIdOf(actor), entries.map(() => newId()), entries.map((e) => e.orgId ?? null), entries.map((e) => e.accountId ?? null),
      entries.map((e) => e.action), entries.map((e) => e.entityType ?? null), entries.map((e) => e.entityId ?? null),
      entries.map((e) => JSON.stringify(e.details ?? {}))]);
}
