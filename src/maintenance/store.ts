// The SQL of maintenance windows. Every function is scoped by org: a foreign id reads as absent.
// "Now" is always passed in (the service's clock), so status and quota agree with what answers.
import type { Executor } from '../db/db.js';
import type { WriteSource } from '../http/write-source.js';
import type { MaintenanceFilter } from './schema.js';

export interface WindowRow {
  id: string;
  org_id: string;
  account_id: string;
  title: string;
  description: string | null;
  starts_at: Date;
  ends_at: Date;
  suppress_alerts: boolean;
  write_source: WriteSource;
  deleted_at: Date | null;
  deleted_by: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface UpdateRow { id: string; window_id: string; message: string; created_at: Date }

export type WindowValues = Pick<WindowRow, 'title' | 'description' | 'starts_at' | 'ends_at' | 'suppress_alerts' | 'write_source'>;

/** Windows that hold a quota slot: not cancelled and not yet ended. */
const LIVE = 'deleted_at IS NULL AND ends_at > $now';

/**
 * Inserts when the account has room for one more live window (`limit` null is unlimited), under
 * the pool lock the caller holds. null when the account is full.
 */
export async function insertWindow(tx: Executor, w: { id: string; orgId: string; accountId: string; limit: number | null; now: Date } & WindowValues): Promise<WindowRow | null> {
  const [row] = await tx.query<WindowRow>(
    `INSERT INTO maintenance_windows (id, org_id, account_id, title, description, starts_at, ends_at, suppress_alerts, write_source)
     SELECT $1, $2, $3, $6, $7, $8, $9, $10, $11
      WHERE $4::int IS NULL
         OR (SELECT count(*) FROM maintenance_windows WHERE account_id = $3 AND ${LIVE.replace('$now', '$5')}) < $4::int
     RETURNING *`,
    [w.id, w.orgId, w.accountId, w.limit, w.now, w.title, w.description, w.starts_at, w.ends_at, w.suppress_alerts, w.write_source]);
  return row ?? null;
}

export async function countAccountLiveWindows(db: Executor, accountId: string, now: Date): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM maintenance_windows WHERE account_id = $1 AND ${LIVE.replace('$now', '$2')}`, [accountId, now]);
  return row?.n ?? 0;
}

export async function getWindowRow(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<WindowRow | null> {
  const [row] = await db.query<WindowRow>(
    `SELECT * FROM maintenance_windows WHERE org_id = $1 AND id = $2${lock ? ' FOR UPDATE' : ''}`, [orgId, id]);
  return row ?? null;
}

const FILTERS: Record<MaintenanceFilter, { where: string; order: string }> = {
  active: { where: 'deleted_at IS NULL AND starts_at <= $2 AND ends_at > $2', order: 'ends_at, id' },
  upcoming: { where: 'deleted_at IS NULL AND starts_at > $2', order: 'starts_at, id' },
  past: { where: '(deleted_at IS NOT NULL OR ends_at <= $2)', order: 'LEAST(ends_at, COALESCE(deleted_at, ends_at)) DESC, id DESC' },
  all: { where: '$2::timestamptz IS NOT NULL', order: 'starts_at DESC, id DESC' },
};

export async function listWindowRows(db: Executor, orgId: string, filter: MaintenanceFilter, now: Date, page: { limit: number; offset: number }): Promise<{ rows: WindowRow[]; total: number }> {
  const { where, order } = FILTERS[filter];
  const rows = await db.query<WindowRow>(
    `SELECT * FROM maintenance_windows WHERE org_id = $1 AND ${where} ORDER BY ${order} LIMIT $3 OFFSET $4`, [orgId, now, page.limit, page.offset]);
  const [count] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM maintenance_windows WHERE org_id = $1 AND ${where}`, [orgId, now]);
  return { rows, total: count?.n ?? 0 };
}

/** Components (in order) and updates (oldest first) of each window, in two statements whatever the count. */
export async function windowDetails(db: Executor, ids: readonly string[]): Promise<{ components: Map<string, string[]>; updates: Map<string, UpdateRow[]> }> {
  const components = new Map<string, string[]>(ids.map((id) => [id, []]));
  const updates = new Map<string, UpdateRow[]>(ids.map((id) => [id, []]));
  if (!ids.length) return { components, updates };
  const comps = await db.query<{ window_id: string; target_id: string }>(
    'SELECT window_id, target_id FROM maintenance_components WHERE window_id = ANY($1::uuid[]) ORDER BY window_id, position', [ids]);
  for (const c of comps) components.get(c.window_id)!.push(c.target_id);
  const ups = await db.query<UpdateRow>(
    'SELECT id, window_id, message, created_at FROM maintenance_updates WHERE window_id = ANY($1::uuid[]) ORDER BY created_at, id', [ids]);
  for (const u of ups) updates.get(u.window_id)!.push(u);
  return { components, updates };
}

export async function replaceComponents(tx: Executor, windowId: string, targetIds: readonly string[]): Promise<void> {
  await tx.query('DELETE FROM maintenance_components WHERE window_id = $1', [windowId]);
  if (!targetIds.length) return;
  await tx.query(
    `INSERT INTO maintenance_components (window_id, target_id, position)
     SELECT $1, t.id, t.n FROM unnest($2::uuid[]) WITH ORDINALITY AS t(id, n)`, [windowId, targetIds]);
}

export async function updateWindowRow(tx: Executor, orgId: string, id: string, v: WindowValues): Promise<WindowRow> {
  const [row] = await tx.query<WindowRow>(
    `UPDATE maintenance_windows SET title = $3, description = $4, starts_at = $5, ends_at = $6, suppress_alerts = $7,
       write_source = $8, updated_at = now()
     WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, v.title, v.description, v.starts_at, v.ends_at, v.suppress_alerts, v.write_source]);
  return row!;
}

export async function cancelWindowRow(tx: Executor, orgId: string, id: string, c: { now: Date; by: string | null; writeSource: WriteSource }): Promise<WindowRow> {
  const [row] = await tx.query<WindowRow>(
    `UPDATE maintenance_windows SET deleted_at = $3, deleted_by = $4, write_source = $5, updated_at = now()
     WHERE org_id = $1 AND id = $2 RETURNING *`, [orgId, id, c.now, c.by, c.writeSource]);
  return row!;
}

export async function countUpdates(db: Executor, windowId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM maintenance_updates WHERE window_id = $1', [windowId]);
  return row?.n ?? 0;
}

export async function insertUpdate(tx: Executor, u: { id: string; windowId: string; message: string; by: string | null; now: Date }): Promise<void> {
  await tx.query('INSERT INTO maintenance_updates (id, window_id, message, created_by, created_at) VALUES ($1, $2, $3, $4, $5)',
    [u.id, u.windowId, u.message, u.by, u.now]);
}

export async function touchWindow(tx: Executor, id: string, writeSource: WriteSource): Promise<void> {
  await tx.query('UPDATE maintenance_windows SET write_source = $2, updated_at = now() WHERE id = $1', [id, writeSource]);
}

// Alert suppression (monitoring-api.md, "Maintenance window"): while a window with
// `suppress_alerts` covers a monitor, the monitor opens no incidents and sends no opened or
// reminder notifications (a recovery still closes an alert raised before; see the outbox).
// A cancelled window suppressed until it was cancelled (one cancelled before it began, never).
const SUPPRESSION_END = 'LEAST(mw.ends_at, COALESCE(mw.deleted_at, mw.ends_at))';
const SUPPRESSES = `mw.suppress_alerts AND mw.starts_at < ${SUPPRESSION_END}`;

/**
 * SQL true while a suppressing window covers the monitor `target` at `at` (both SQL expressions):
 * the one test the outbox and the reminder queue ask.
 */
export function suppressedAtSql(target: string, at: string): string {
  return `EXISTS (SELECT 1 FROM maintenance_components mc JOIN maintenance_windows mw ON mw.id = mc.window_id
     WHERE mc.target_id = ${target} AND ${SUPPRESSES} AND mw.starts_at <= ${at} AND ${SUPPRESSION_END} > ${at})`;
}

/** Per monitor, the spans `[from, until)` of suppressing windows that overlap `[from, to]` (the incident engine). */
export async function suppressingSpans(db: Executor, targetIds: readonly string[], from: Date, to: Date): Promise<Map<string, { from: number; until: number }[]>> {
  const rows = await db.query<{ target_id: string; starts_at: Date; ends_at: Date }>(
    `SELECT mc.target_id, mw.starts_at, ${SUPPRESSION_END} AS ends_at
       FROM maintenance_components mc JOIN maintenance_windows mw ON mw.id = mc.window_id
      WHERE mc.target_id = ANY($1::uuid[]) AND ${SUPPRESSES} AND mw.starts_at <= $3 AND ${SUPPRESSION_END} > $2`,
    [targetIds, from, to], { prepared: 'maintenance_suppressing_spans' });
  const out = new Map<string, { from: number; until: number }[]>();
  for (const r of rows) {
    const span = { from: r.starts_at.getTime(), until: r.ends_at.getTime() };
    const list = out.get(r.target_id);
    if (list) list.push(span);
    else out.set(r.target_id, [span]);
  }
  return out;
}
