// The SQL of targets. Every function is scoped by org: a foreign id reads as absent.
import type { Executor } from '../db/db.js';
import { lockQuotaPool } from '../plans/quota-lock.js';
import { AppError } from '../shared/errors.js';
import { isUuid } from '../shared/ids.js';
import type { CheckKind } from './constants.js';

export interface TargetRow {
  id: string;
  org_id: string;
  account_id: string;
  name: string;
  kind: CheckKind;
  /** The validated check with credentials sealed in place. */
  check_spec: Record<string, unknown> & { type: CheckKind };
  interval_secs: number;
  enabled: boolean;
  tags: string[];
  regions: string[];
  group_name: string | null;
  owner_user_id: string | null;
  alert_channel_ids: string[];
  alert_confirmations: number;
  notify_recovery: boolean;
  renotify_interval_secs: number;
  recovery_period_secs: number;
  region_policy: unknown;
  variable_refs: string[];
  write_source: string;
  held_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** Whether a monitor runs now: enabled and not held by its plan (the scheduler asks the same in SQL). */
export const runsNow = (row: Pick<TargetRow, 'enabled' | 'held_at'>): boolean => row.enabled && row.held_at === null;

/** The columns a write sets (everything but ids, account, hold and timestamps). */
export type TargetValues = Pick<TargetRow, 'name' | 'kind' | 'check_spec' | 'interval_secs' | 'enabled' | 'tags' | 'regions'
  | 'group_name' | 'owner_user_id' | 'alert_channel_ids' | 'alert_confirmations' | 'notify_recovery' | 'renotify_interval_secs'
  | 'recovery_period_secs' | 'region_policy' | 'variable_refs' | 'write_source'>;

const VALUE_COLUMNS = ['name', 'kind', 'check_spec', 'interval_secs', 'enabled', 'tags', 'regions', 'group_name', 'owner_user_id',
  'alert_channel_ids', 'alert_confirmations', 'notify_recovery', 'renotify_interval_secs', 'recovery_period_secs', 'region_policy',
  'variable_refs', 'write_source'] as const satisfies ReadonlyArray<keyof TargetValues>;

const JSON_COLUMNS = new Set<string>(['check_spec', 'region_policy']);
const param = (column: string, value: unknown): unknown => (JSON_COLUMNS.has(column) ? JSON.stringify(value) : value);

/** Serialises quota checks of one account: held until the transaction ends. */
export async function lockAccount(tx: Executor, accountId: string): Promise<void> {
  await lockQuotaPool(tx, 'targets', accountId);
}

export async function countAccountTargets(db: Executor, accountId: string, kind?: CheckKind): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM targets WHERE account_id = $1${kind ? ' AND kind = $2' : ''}`, kind ? [accountId, kind] : [accountId]);
  return row?.n ?? 0;
}

/** `max_regions` is per monitor: its usage is the most regions any one monitor of the account holds. */
export async function mostRegionsOfAMonitor(db: Executor, accountId: string): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT coalesce(max(cardinality(regions)), 0)::int AS n FROM targets WHERE account_id = $1', [accountId]);
  return row?.n ?? 0;
}

/**
 * Inserts when the account has room: the count is bound inside the statement, under the lock the
 * caller holds (`lockAccount`). `limit` null is unlimited. null when the account is full.
 */
export async function insertTarget(tx: Executor, t: { id: string; orgId: string; accountId: string; limit: number | null } & TargetValues): Promise<TargetRow | null> {
  const values = VALUE_COLUMNS.map((c) => param(c, t[c]));
  const placeholders = VALUE_COLUMNS.map((_, i) => `$${i + 5}`).join(', ');
  const [row] = await tx.query<TargetRow>(
    `INSERT INTO targets (id, org_id, account_id, ${VALUE_COLUMNS.join(', ')})
     SELECT $1, $2, $3, ${placeholders}
      WHERE $4::int IS NULL OR (SELECT count(*) FROM targets WHERE account_id = $3) < $4::int
     RETURNING *`,
    [t.id, t.orgId, t.accountId, t.limit, ...values]);
  return row ?? null;
}

/**
 * `lock: 'update'` holds the row until the transaction ends. It is the lock of an UPDATE that keeps
 * the id (NO KEY): rows that reference the monitor (results, pings) can still be written meanwhile,
 * which is what lets a heartbeat ping batch hold its heartbeat rows while it writes results.
 */
export async function getTargetRow(db: Executor, orgId: string, id: string, lock?: 'update'): Promise<TargetRow | null> {
  const [row] = await db.query<TargetRow>(
    `SELECT * FROM targets WHERE org_id = $1 AND id = $2${lock ? ' FOR NO KEY UPDATE' : ''}`, [orgId, id]);
  return row ?? null;
}

export interface TargetFilter { tag?: string; enabled?: boolean; q?: string }

const likeEscape = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listTargetRows(db: Executor, orgId: string, filter: TargetFilter, page: { limit: number; offset: number }): Promise<{ rows: TargetRow[]; total: number }> {
  const where = ['org_id = $1'];
  const params: unknown[] = [orgId];
  if (filter.tag !== undefined) where.push(`tags @> ARRAY[$${params.push(filter.tag)}::text]`);
  if (filter.enabled !== undefined) where.push(`enabled = $${params.push(filter.enabled)}`);
  if (filter.q !== undefined) where.push(`name ILIKE $${params.push(`%${likeEscape(filter.q)}%`)}`);
  const clause = where.join(' AND ');
  const rows = await db.query<TargetRow>(
    `SELECT * FROM targets WHERE ${clause} ORDER BY id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, page.limit, page.offset]);
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM targets WHERE ${clause}`, params);
  return { rows, total: count?.n ?? 0 };
}

export async function updateTargetRow(tx: Executor, orgId: string, id: string, values: TargetValues): Promise<TargetRow | null> {
  const sets = VALUE_COLUMNS.map((c, i) => `${c} = $${i + 3}`).join(', ');
  const [row] = await tx.query<TargetRow>(
    `UPDATE targets SET ${sets}, updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING *`,
    [orgId, id, ...VALUE_COLUMNS.map((c) => param(c, values[c]))]);
  return row ?? null;
}

export async function deleteTargetRow(tx: Executor, orgId: string, id: string): Promise<boolean> {
  await lockHeartbeatsOf(tx, [id]);
  const rows = await tx.query('DELETE FROM targets WHERE org_id = $1 AND id = $2 RETURNING id', [orgId, id]);
  return rows.length > 0;
}

export async function isOrgMember(db: Executor, orgId: string, userId: string): Promise<boolean> {
  const rows = await db.query('SELECT 1 FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId]);
  return rows.length > 0;
}

export async function countTargetsReferencing(db: Executor, orgId: string, key: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM targets WHERE org_id = $1 AND variable_refs @> ARRAY[$2::text]', [orgId, key]);
  return row?.n ?? 0;
}

/**
 * Restamps `write_source` for a write to one of the monitor's own records (its manual state, its
 * ping URL): monitoring-api.md, Conventions 8, "restamped by every write through any endpoint".
 */
export async function stampTargetWrite(tx: Executor, orgId: string, id: string, writeSource: string): Promise<void> {
  await tx.query('UPDATE targets SET write_source = $3, updated_at = now() WHERE org_id = $1 AND id = $2', [orgId, id, writeSource]);
}

export async function setTargetRegions(tx: Executor, orgId: string, id: string, regions: string[], writeSource: string): Promise<TargetRow | null> {
  const [row] = await tx.query<TargetRow>(
    'UPDATE targets SET regions = $3, write_source = $4, updated_at = now() WHERE org_id = $1 AND id = $2 RETURNING *',
    [orgId, id, regions, writeSource]);
  return row ?? null;
}

/**
 * The subset of `ids` that are monitors of `orgId` (malformed ids are simply absent). `lock: 'share'`
 * holds them until the transaction ends, so a delete beside the caller's write waits for it.
 */
export async function existingTargetIds(db: Executor, orgId: string, ids: readonly string[], lock?: 'share'): Promise<Set<string>> {
  const wellFormed = ids.filter(isUuid);
  if (!wellFormed.length) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM targets WHERE org_id = $1 AND id = ANY($2::uuid[])${lock ? ' FOR SHARE' : ''}`, [orgId, wellFormed]);
  return new Set(rows.map((r) => r.id));
}

/**
 * `ids` as distinct lower-cased ids, each a monitor of the org, share-locked until the caller's
 * write commits; a duplicate or an id that is not the org's monitor is 400 naming `<field>[i]`.
 */
export async function checkOwnMonitorIds(tx: Executor, orgId: string, ids: readonly string[], field: string): Promise<string[]> {
  const invalid = (i: number, message: string): AppError => new AppError(400, 'VALIDATION_FAILED', `${field}[${i}]: ${message}`, { field: `${field}[${i}]` });
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    const key = id.toLowerCase();
    if (seen.has(key)) throw invalid(i, 'duplicate monitor');
    seen.add(key);
  });
  const lowered = [...seen];
  const known = await existingTargetIds(tx, orgId, lowered, 'share');
  lowered.forEach((id, i) => { if (!known.has(id)) throw invalid(i, 'no monitor of this org has this id'); });
  return lowered;
}

/** A PostgreSQL array literal of strings: one element of a `text[]` parameter that is itself an array. */
const arrayLiteral = (items: readonly string[]): string =>
  `{${items.map((s) => `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`;

/**
 * Inserts many targets of one org in one statement per chunk: each column travels as one array
 * and `unnest` turns them back into rows (array columns as literals, cast per row), so 10,000
 * monitors cost a few round trips and no JSON document for the store to parse. Only the
 * store-set timestamps come back. The caller holds the account lock and has counted.
 */
export async function insertTargets(tx: Executor, orgId: string, accountId: string, rows: ReadonlyArray<{ id: string } & TargetValues>): Promise<TargetRow[]> {
  const out: TargetRow[] = [];
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const chunk = rows.slice(start, start + INSERT_CHUNK);
    const column = <T>(pick: (r: { id: string } & TargetValues) => T): T[] => chunk.map(pick);
    const stamps = await tx.query<Pick<TargetRow, 'id' | 'created_at' | 'updated_at'>>(
      `INSERT INTO targets (id, org_id, account_id, ${VALUE_COLUMNS.join(', ')})
       SELECT r.id, $1, $2, r.name, r.kind, r.check_spec, r.interval_secs, r.enabled, r.tags::text[], r.regions::text[], r.group_name,
              r.owner_user_id, r.alert_channel_ids::uuid[], r.alert_confirmations, r.notify_recovery, r.renotify_interval_secs,
              r.recovery_period_secs, r.region_policy, r.variable_refs::text[], r.write_source
         FROM unnest($3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::int[], $8::bool[], $9::text[], $10::text[], $11::text[],
                     $12::uuid[], $13::text[], $14::int[], $15::bool[], $16::int[], $17::int[], $18::jsonb[], $19::text[], $20::text[])
           AS r(id, name, kind, check_spec, interval_secs, enabled, tags, regions, group_name, owner_user_id, alert_channel_ids,
                alert_confirmations, notify_recovery, renotify_interval_secs, recovery_period_secs, region_policy, variable_refs, write_source)
       RETURNING id, created_at, updated_at`,
      [orgId, accountId, column((r) => r.id), column((r) => r.name), column((r) => r.kind), column((r) => JSON.stringify(r.check_spec)),
        column((r) => r.interval_secs), column((r) => r.enabled), column((r) => arrayLiteral(r.tags)), column((r) => arrayLiteral(r.regions)),
        column((r) => r.group_name), column((r) => r.owner_user_id), column((r) => arrayLiteral(r.alert_channel_ids)),
        column((r) => r.alert_confirmations), column((r) => r.notify_recovery), column((r) => r.renotify_interval_secs),
        column((r) => r.recovery_period_secs), column((r) => JSON.stringify(r.region_policy)), column((r) => arrayLiteral(r.variable_refs)),
        column((r) => r.write_source)]);
    const byId = new Map(stamps.map((s) => [s.id, s]));
    for (const r of chunk) {
      const stamp = byId.get(r.id)!;
      out.push({ ...r, org_id: orgId, account_id: accountId, held_at: null, created_at: stamp.created_at, updated_at: stamp.updated_at });
    }
  }
  return out;
}

const INSERT_CHUNK = 2000;

/** Writes many rows' values in one statement per chunk (bulk actions); answers the updated rows. */
export async function updateTargetRows(tx: Executor, orgId: string, rows: ReadonlyArray<{ id: string } & TargetValues>): Promise<TargetRow[]> {
  const out: TargetRow[] = [];
  const sets = VALUE_COLUMNS.map((c) => `${c} = r.${c}`).join(', ');
  for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
    const chunk = rows.slice(start, start + INSERT_CHUNK).map((r) => ({ id: r.id, ...Object.fromEntries(VALUE_COLUMNS.map((c) => [c, r[c]])) }));
    out.push(...await tx.query<TargetRow>(
      `UPDATE targets t SET ${sets}, updated_at = now()
         FROM jsonb_populate_recordset(NULL::targets, $2::jsonb) r
        WHERE t.org_id = $1 AND t.id = r.id
       RETURNING t.*`, [orgId, JSON.stringify(chunk)]));
  }
  return out;
}

/** The org's rows among `ids`, locked for update until the transaction ends. */
export async function lockTargetRows(tx: Executor, orgId: string, ids: readonly string[]): Promise<TargetRow[]> {
  return tx.query<TargetRow>('SELECT * FROM targets WHERE org_id = $1 AND id = ANY($2::uuid[]) ORDER BY id FOR NO KEY UPDATE', [orgId, ids.filter(isUuid)]);
}

export async function deleteTargetRows(tx: Executor, orgId: string, ids: readonly string[]): Promise<void> {
  await lockHeartbeatsOf(tx, ids);
  await tx.query('DELETE FROM targets WHERE org_id = $1 AND id = ANY($2::uuid[])', [orgId, ids]);
}

/**
 * A ping batch holds heartbeat rows and then references the monitor; a delete takes the monitor
 * and then cascades to the heartbeat. Taking the heartbeats first makes the delete wait its turn
 * instead of deadlocking with the batch.
 */
async function lockHeartbeatsOf(tx: Executor, ids: readonly string[]): Promise<void> {
  await tx.query('SELECT 1 FROM heartbeats WHERE target_id = ANY($1::uuid[]) ORDER BY target_id FOR UPDATE', [ids]);
}
