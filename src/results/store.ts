// Writes check results. One statement per batch whatever its size: the columns travel as arrays
// and `unnest` turns them back into rows, so a batch of 500 costs one round trip and one plan.
import type { Executor } from '../db/db.js';
import type { CheckResultRecord } from './types.js';

/**
 * Inserts `records`, dropping those whose monitor is gone (deleted between the check and the
 * write): a late result is not worth failing the whole batch for.
 */
export async function insertResults(db: Executor, records: readonly CheckResultRecord[]): Promise<void> {
  if (!records.length) return;
  const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));
  await db.query(
    `INSERT INTO check_results (target_id, org_id, region, checked_at, status, duration_ms, error, timings, fields)
     SELECT r.target_id, r.org_id, r.region, r.checked_at, r.status, r.duration_ms, r.error, r.timings, r.fields
     FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::int[], $7::text[], $8::jsonb[], $9::jsonb[])
       AS r(target_id, org_id, region, checked_at, status, duration_ms, error, timings, fields)
     JOIN targets t ON t.id = r.target_id`,
    [
      records.map((r) => r.targetId),
      records.map((r) => r.orgId),
      records.map((r) => r.region),
      records.map((r) => r.checkedAt.toISOString()),
      records.map((r) => r.status),
      records.map((r) => Math.max(0, Math.round(r.duration_ms))),
      records.map((r) => r.error),
      records.map((r) => json(r.timings)),
      records.map((r) => json(r.fields)),
    ]);
}
