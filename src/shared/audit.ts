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
