// The SQL of variables. Every function is scoped by org: a foreign id reads as absent.
import type { Executor } from '../db/db.js';

export interface VariableRow {
  id: string;
  org_id: string;
  key: string;
  is_secret: boolean;
  /** The plain value; null for a secret. */
  value: string | null;
  /** The sealer's output for a secret; null otherwise. */
  sealed_value: string | null;
  created_at: Date;
  updated_at: Date;
}

/** What a row stores for a value: exactly one of the two columns is set. */
export interface StoredValue { value: string | null; sealed_value: string | null }

export async function listVariableRows(db: Executor, orgId: string, page: { limit: number; offset: number }): Promise<{ rows: VariableRow[]; total: number }> {
  const rows = await db.query<VariableRow>(
    'SELECT * FROM variables WHERE org_id = $1 ORDER BY key LIMIT $2 OFFSET $3', [orgId, page.limit, page.offset]);
  const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM variables WHERE org_id = $1', [orgId]);
  return { rows, total: count?.n ?? 0 };
}

/** `lock: 'update'` holds the row until the transaction ends (delete checks usage under it). */
export async function getVariableRow(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<VariableRow | null> {
  const [row] = await db.query<VariableRow>(
    `SELECT * FROM variables WHERE org_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [orgId, id]);
  return row ?? null;
}

/**
 * Every variable of the org by key, without values. `lock: 'share'` keeps them from being deleted
 * until the transaction ends: a monitor that references them is saved in the same transaction.
 */
export async function listVariableKinds(db: Executor, orgId: string, lock?: 'share'): Promise<Array<{ key: string; is_secret: boolean }>> {
  return db.query<{ key: string; is_secret: boolean }>(
    `SELECT key, is_secret FROM variables WHERE org_id = $1 ORDER BY key${lock ? ' FOR SHARE' : ''}`, [orgId]);
}

/** Every variable of the org with its stored value (for resolving references before a check runs). */
export async function listVariableValues(db: Executor, orgId: string): Promise<VariableRow[]> {
  return db.query<VariableRow>('SELECT * FROM variables WHERE org_id = $1 ORDER BY key', [orgId]);
}

/** null when the org already has the key. */
export async function insertVariable(db: Executor, v: { id: string; orgId: string; key: string; isSecret: boolean } & StoredValue): Promise<VariableRow | null> {
  const [row] = await db.query<VariableRow>(
    `INSERT INTO variables (id, org_id, key, is_secret, value, sealed_value) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (org_id, key) DO NOTHING RETURNING *`,
    [v.id, v.orgId, v.key, v.isSecret, v.value, v.sealed_value]);
  return row ?? null;
}

export async function updateVariableValue(db: Executor, orgId: string, id: string, stored: StoredValue): Promise<VariableRow | null> {
  const [row] = await db.query<VariableRow>(
    `UPDATE variables SET value = $3, sealed_value = $4, updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, stored.value, stored.sealed_value]);
  return row ?? null;
}

export async function deleteVariableRow(db: Executor, orgId: string, id: string): Promise<boolean> {
  const rows = await db.query('DELETE FROM variables WHERE org_id = $1 AND id = $2 RETURNING id', [orgId, id]);
  return rows.length > 0;
}
