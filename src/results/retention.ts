// The history sweep: raw results after the org plan's `raw_days`, hourly rollups moved into daily
// ones after HOURLY_KEEP_DAYS, daily rollups after `retention_days`, idempotency keys after a day,
// heartbeat pings after PING_LOG_DAYS and their output (a POST body) after the shorter OUTPUT_DAYS.
// Only results already folded into the rollups go (rollup-folder.ts). Results a batch wrote beside
// their monitor's delete go too, found through the deleted ids (0031_results_without_fk.sql).
// Each monitor-region keeps its newest result older than `raw_days`: its status stands until the
// next result, so a raw read of a range starting inside `raw_days` needs it (a heartbeat healthy
// for months has one result, its verdict, and a day's uptime starts from it).
// Deletes go in small batches, each its own statement, so no table is locked and no transaction
// runs long; two nodes sweeping at once only repeat each other's lookups.
import type { Logger } from 'pino';
import type { Db } from '../db/db.js';
import type { PlanService } from '../plans/service.js';
import type { Clock } from '../shared/context.js';
import { compactHours, DAY_MS, HOURLY_KEEP_DAYS } from './rollup-store.js';

/** Rows per delete statement. */
const BATCH = 5_000;
/** Deleted monitor ids are kept this long: a results batch commits within seconds of its join. */
const DELETED_TARGET_KEEP_MS = DAY_MS;
/** Idempotency keys answer retries for a day (see 0008_idempotency.sql). */
const IDEMPOTENCY_KEY_TTL_MS = DAY_MS;

/**
 * Rows removed by kind; `hourly` counts hourly rollups moved into daily ones, `orphans` results a
 * batch wrote beside their monitor's delete.
 */
export interface SweepReport { results: number; orphans: number; hourly: number; daily: number; idempotencyKeys: number; pings: number; outputs: number }

/** Heartbeat pings outlive the 14 days cadence advice reads; their output goes well before them. */
export const PING_LOG_DAYS = 30;
export const OUTPUT_DAYS = 7;

/** Runs `remove` (which deletes at most `batch` rows) until a batch comes back short; the total. */
async function drain(batch: number, remove: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await remove();
    total += n;
    if (n < batch) return total;
  }
}

async function deleted(db: Db, sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.query<{ n: number }>(`WITH gone AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM gone`, params);
  return row!.n;
}

/** Orgs grouped by their plan's (raw_days, retention_days): most share their plan's, so few groups. */
async function orgsByKeep(db: Db, plans: PlanService): Promise<Map<string, { rawDays: number | null; retentionDays: number | null; orgIds: string[] }>> {
  const orgs = await db.query<{ id: string; account_id: string }>('SELECT id, account_id FROM orgs');
  const groups = new Map<string, { rawDays: number | null; retentionDays: number | null; orgIds: string[] }>();
  for (const org of orgs) {
    const { caps } = await plans.forAccount(org.account_id);
    const key = `${caps.raw_days}/${caps.retention_days}`;
    const group = groups.get(key) ?? { rawDays: caps.raw_days, retentionDays: caps.retention_days, orgIds: [] };
    group.orgIds.push(org.id);
    groups.set(key, group);
  }
  return groups;
}

/**
 * Clears the output of up to `batch` pings received before $1. The pings still holding output are
 * found through their own index (migration 0030), not among every ping of the period.
 */
export const clearOutputsSql = (batch: number): string => `UPDATE heartbeat_pings SET output = NULL WHERE id IN (
       SELECT id FROM heartbeat_pings WHERE received_at < $1 AND output IS NOT NULL LIMIT ${batch})`;

export async function sweepHistory(db: Db, plans: PlanService, clock: Clock, { batch = BATCH } = {}): Promise<SweepReport> {
  const now = clock.now().getTime();
  const before = (days: number): Date => new Date(now - days * DAY_MS);
  const report: SweepReport = { results: 0, orphans: 0, hourly: 0, daily: 0, idempotencyKeys: 0, pings: 0, outputs: 0 };
  report.orphans = await drain(batch, () => deleted(db,
    `DELETE FROM check_results WHERE id IN (
       SELECT r.id FROM deleted_targets d JOIN check_results r ON r.target_id = d.target_id LIMIT ${batch})`, []));
  await db.query('DELETE FROM deleted_targets WHERE deleted_at < $1', [new Date(now - DELETED_TARGET_KEEP_MS)]);
  // Days first, so a day made of hours past `retention_days` goes in the same sweep.
  report.hourly = await drain(batch, () => compactHours(db, before(HOURLY_KEEP_DAYS), batch));
  for (const { rawDays, retentionDays, orgIds } of (await orgsByKeep(db, plans)).values()) {
    if (rawDays !== null) {
      report.results += await drain(batch, () => deleted(db,
        `DELETE FROM check_results WHERE id IN (
           SELECT r.id FROM check_results r WHERE r.checked_at < $1 AND r.org_id = ANY($2::uuid[])
              AND EXISTS (SELECT 1 FROM check_results n WHERE n.target_id = r.target_id AND n.region = r.region
                            AND n.checked_at < $1 AND (n.checked_at, n.id) > (r.checked_at, r.id))
              AND EXISTS (SELECT 1 FROM result_cursors c WHERE c.target_id = r.target_id AND c.region = r.region
                            AND c.checked_at >= r.checked_at)
            LIMIT ${batch})`,
        [before(rawDays), orgIds]));
    }
    if (retentionDays !== null) {
      report.daily += await drain(batch, () => deleted(db,
        `DELETE FROM result_rollups WHERE ctid = ANY(ARRAY(
           SELECT r.ctid FROM result_rollups r JOIN targets t ON t.id = r.target_id
            WHERE r.granularity = 'day' AND r.bucket_start < $1 AND t.org_id = ANY($2::uuid[]) LIMIT ${batch}))`,
        [before(retentionDays), orgIds]));
    }
  }
  report.idempotencyKeys = await drain(batch, () => deleted(db,
    `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(SELECT ctid FROM idempotency_keys WHERE created_at < $1 LIMIT ${batch}))`,
    [new Date(now - IDEMPOTENCY_KEY_TTL_MS)]));
  report.pings = await drain(batch, () => deleted(db,
    `DELETE FROM heartbeat_pings WHERE id IN (SELECT id FROM heartbeat_pings WHERE received_at < $1 LIMIT ${batch})`, [before(PING_LOG_DAYS)]));
  report.outputs = await drain(batch, () => deleted(db, clearOutputsSql(batch), [before(OUTPUT_DAYS)]));
  return report;
}

/** How often each node sweeps; the first sweep waits a little so a restart storm does not sweep at once. */
const SWEEP_EVERY_MS = 60 * 60_000;

export function startHistorySweep(deps: { db: Db; plans: PlanService; clock: Clock; log: Logger }): { stop(): void } {
  let running = false;
  const run = async (): Promise<void> => {
    if (running) return;
    running = true;
    try {
      const report = await sweepHistory(deps.db, deps.plans, deps.clock);
      deps.log.info({ swept: report }, 'history sweep done');
    } catch (err) {
      deps.log.error({ err }, 'history sweep failed; the next one retries');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => void run(), 60_000 + Math.random() * 4 * 60_000);
  const every = setInterval(() => void run(), SWEEP_EVERY_MS);
  first.unref();
  every.unref();
  return { stop: () => { clearTimeout(first); clearInterval(every); } };
}
