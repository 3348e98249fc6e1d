// Writes check results. One statement per batch whatever its size: the columns travel as arrays
// and `unnest` turns them back into rows, so a batch of 500 costs one round trip and one plan.
import type { Executor } from '../db/db.js';
import { newId } from '../shared/ids.js';
import { PHASES } from './rollup.js';
import type { CheckResultRecord, PhaseTimings } from './types.js';

/** Phase timings to a hundredth of a millisecond: finer is noise, and it keeps rows small. */
export function roundTimings(timings: CheckResultRecord['timings']): CheckResultRecord['timings'] {
  if (!timings) return timings;
  const rounded: NonNullable<CheckResultRecord['timings']> = {};
  for (const phase in timings) rounded[phase as keyof typeof rounded] = Math.round(timings[phase as keyof typeof timings]! * 100) / 100;
  return rounded;
}

/**
 * Inserts `records`. Results whose monitor is gone (deleted between the check and the write) are
 * dropped by the join: a late result is not worth failing the whole batch for. The join is also
 * the only check: the table has no foreign key (0031_results_without_fk.sql).
 */
export async function insertResults(tx: Executor, records: readonly CheckResultRecord[]): Promise<void> {
  if (!records.length) return;
  const timings = records.map((r) => roundTimings(r.timings));
  await tx.query(
    `INSERT INTO check_results (id, target_id, org_id, region, checked_at, status, duration_ms, error, fields, stale_after_ms, ${TIMING_COLUMNS})
     SELECT r.id, r.target_id, r.org_id, r.region, r.checked_at, r.status, r.duration_ms, r.error, r.fields, r.stale_after_ms, ${TIMING_COLUMNS}
     FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::timestamptz[], $6::text[], $7::int[], $8::text[], $9::jsonb[], $10::bigint[],
                 $11::real[], $12::real[], $13::real[], $14::real[], $15::real[])
       AS r(id, target_id, org_id, region, checked_at, status, duration_ms, error, fields, stale_after_ms, ${TIMING_COLUMNS})
     JOIN targets t ON t.id = r.target_id`,
    [
      records.map((r) => r.id ?? newId()),
      records.map((r) => r.targetId),
      records.map((r) => r.orgId),
      records.map((r) => r.region),
      records.map((r) => r.checkedAt.toISOString()),
      records.map((r) => r.status),
      records.map((r) => Math.max(0, Math.round(r.duration_ms))),
      records.map((r) => r.error),
      records.map((r) => (r.fields === undefined ? null : JSON.stringify(r.fields))),
      records.map((r) => r.staleAfterMs ?? null),
      ...PHASES.map((phase) => timings.map((t) => t?.[phase] ?? null)),
    ], { prepared: 'results_insert' });
}

/** The phase timing columns, in PHASES order (0032_result_timing_columns.sql). */
export const TIMING_COLUMNS = PHASES.map((phase) => `${phase}_ms`).join(', ');

/** Result `r`'s phase timings as one array in PHASES order, for `timingsOf`. */
export const timingsArray = (r: string): string => `ARRAY[${PHASES.map((phase) => `${r}.${phase}_ms`).join(', ')}]`;

/** Phase timings from their columns' values in PHASES order; null when no phase was measured. */
export function timingsOf(values: readonly (number | null)[]): PhaseTimings | null {
  let timings: PhaseTimings | null = null;
  PHASES.forEach((phase, i) => {
    const ms = values[i];
    if (ms !== null && ms !== undefined) (timings ??= {})[phase] = ms;
  });
  return timings;
}

export interface StoredResult {
  id: string;
  target_id: string;
  region: string;
  checked_at: Date;
  status: CheckResultRecord['status'];
  duration_ms: number;
  error: string | null;
  timings: CheckResultRecord['timings'] | null;
  fields: Record<string, unknown> | null;
}

export interface ResultWindow { from: Date; to: Date; region?: string }

/** One monitor's results in a window, newest first, with the window's count. */
export async function listResultRows(db: Executor, targetId: string, window: ResultWindow, page: { limit: number; offset: number }): Promise<{ rows: StoredResult[]; total: number }> {
  const params: unknown[] = [targetId, window.from, window.to];
  const region = window.region === undefined ? '' : ` AND region = $${params.push(window.region)}`;
  const where = `target_id = $1 AND checked_at >= $2 AND checked_at <= $3${region}`;
  const [rows, [count]] = await Promise.all([
    db.query<Omit<StoredResult, 'timings'> & { timings: (number | null)[] }>(
      `SELECT id, target_id, region, checked_at, status, duration_ms, error, ${timingsArray('r')} AS timings, fields FROM check_results r
        WHERE ${where} ORDER BY checked_at DESC, id DESC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset]),
    db.query<{ total: number }>(`SELECT count(*)::int AS total FROM check_results WHERE ${where}`, params),
  ]);
  return { rows: rows.map((r) => ({ ...r, timings: timingsOf(r.timings) })), total: count!.total };
}
