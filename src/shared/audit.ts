// Audit rows, written in the same transaction as the change they record.
import type { Executor } from '../db/db.js';
import { actorIdOf, userIdOf, type Actor } from './context.js';
import { newId } from './ids.js';

export interface AuditEntry {
  action: string;
  orgId?: string | null;
  accountId?: string | null;
  entityType?: string;
  entityId?: string;
  details?: Record<string, unknown>;
}

/** The details key naming the user behind a token or session (audit_log has no user column). */
export const ACTING_USER_KEY = 'acting_user_id';

/**
 * The one place an audit row gets its actor. `actor_id` names the token for a token request, so
 * the user acting through it goes into details too (spec: audited "with the acting user").
 * Set last, so an entry's own details cannot name someone else.
 */
export function auditActor(actor: Actor, details: Record<string, unknown> = {}): { type: string; id: string | null; details: string } {
  const userId = userIdOf(actor);
  return { type: actor.type, id: actorIdOf(actor), details: JSON.stringify(userId ? { ...details, [ACTING_USER_KEY]: userId } : details) };
}

export async function writeAudit(tx: Executor, actor: Actor, entry: AuditEntry): Promise<void> {
  const who = auditActor(actor, entry.details);
  await tx.query(
    `INSERT INTO audit_log (id, org_id, account_id, actor_type, actor_id, action, entity_type, entity_id, details)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [newId(), entry.orgId ?? null, entry.accountId ?? null, who.type, who.id, entry.action,
      entry.entityType ?? null, entry.entityId ?? null, who.details]);
}

/** Many audit rows in one statement (a bulk write records each entity it touched). */
export async function writeAuditMany(tx: Executor, actor: Actor, entries: readonly AuditEntry[]): Promise<void> {
  if (!entries.length) return;
  const who = auditActor(actor);
  await tx.query(
    `INSERT INTO audit_log (id, org_id, account_id, actor_type, actor_id, action, entity_type, entity_id, details)
     SELECT e.id, e.org_id, e.account_id, $1, $2, e.action, e.entity_type, e.entity_id, e.details
       FROM unnest($3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::text[], $8::text[], $9::jsonb[])
         AS e(id, org_id, account_id, action, entity_type, entity_id, details)`,
    [who.type, who.id, entries.map(() => newId()), entries.map((e) => e.orgId ?? null), entries.map((e) => e.accountId ?? null),
      entries.map((e) => e.action), entries.map((e) => e.entityType ?? null), entries.map((e) => e.entityId ?? null),
      entries.map((e) => auditActor(actor, e.details).details)]);
}
