// The monitors a node schedules, as the scheduler holds them in memory: loaded per shard, with
// credentials opened once at load (not per check), the plan's floor and region cap applied at
// hand-out (issue 4: "clamped at hand-out and never written back").
import type { Logger } from 'pino';
import type { Executor } from '../db/db.js';
import type { PlanService } from '../plans/service.js';
import type { OperatorRegionT } from '../regions/schema.js';
import type { Sealer } from '../shared/seal.js';
import type { CheckSpecT } from '../targets/check-specs.js';
import type { CheckKind } from '../targets/constants.js';
import { openCredentials } from '../targets/redaction.js';
import { regionsAtHandOut } from '../targets/regions.js';
import { PROBED_KINDS } from '../probes/index.js';
import { effectiveIntervalSecs, SHARD_SQL } from './slots.js';

export interface MonitorRow {
  id: string;
  org_id: string;
  account_id: string;
  kind: CheckKind;
  check_spec: Record<string, unknown> & { type: CheckKind };
  interval_secs: number;
  regions: string[];
  variable_refs: string[];
  runnable: boolean;
}

export interface Monitor {
  id: string;
  orgId: string;
  kind: CheckKind;
  /** Credentials opened; null when one was sealed under a key no longer configured. */
  spec: CheckSpecT | null;
  intervalMs: number;
  /** The regions it runs in after the plan's cap; none when restated. */
  regions: string[];
  variableRefs: string[];
  /** Restated, not probed (manual): no region and no host; the node owning its shard runs it. */
  restated: boolean;
}

/**
 * Kinds whose state the scheduler restates once a minute instead of probing (monitoring-api.md,
 * "Manual monitor"). Heartbeats are neither: their own sweep judges the pings.
 */
export const RESTATED_KINDS: ReadonlySet<CheckKind> = new Set<CheckKind>(['manual']);

/** A MonitorRow as one JSON object, under its own names. */
const ROW_JSON = `json_build_object('id', t.id, 'org_id', t.org_id, 'account_id', t.account_id, 'kind', t.kind, 'check_spec', t.check_spec,
  'interval_secs', t.interval_secs, 'regions', t.regions, 'variable_refs', t.variable_refs,
  'runnable', (t.enabled AND t.held_at IS NULL AND o.deleted_at IS NULL))`;

/**
 * Monitors a read. A load of every shard is paged by id so what one read holds stays bounded by the
 * page, not by the monitors a node runs: at 10,000 monitors one value of them all set the engine's
 * RSS peak (bench:checks); reading them in pages of 1,000 costs about a third more store time a load.
 */
const LOAD_PAGE = 1_000;

/**
 * Every monitor of the shards (runnable or not: a paused one must leave the schedule), in pages of
 * at most `pageSize` by id. Each page is one JSON value, not a row a monitor: the embedded store
 * spends more handing rows over than reading them (10,000 monitors: about 100 ms against 260-310).
 */
export async function* loadShards(db: Executor, shards: readonly number[], changedSince?: Date, pageSize = LOAD_PAGE): AsyncGenerator<MonitorRow[]> {
  if (shards.length === 0) return;
  for (let after: string | null = null; ;) {
    const params: unknown[] = [shards];
    // A hold or release is no edit, so it moves its own time, not `updated_at` (targets/holds.ts).
    const since = changedSince ? ` AND (t.updated_at >= $${params.push(changedSince)} OR t.hold_changed_at >= $${params.length})` : '';
    const from: string = after ? ` AND t.id > $${params.push(after)}` : '';
    const [page]: Array<{ rows: MonitorRow[]; last: string | null }> = await db.query(
      `SELECT coalesce(json_agg(page.row), '[]') AS rows, max(page.id::text) AS last FROM (
         SELECT t.id, ${ROW_JSON} AS row FROM targets t JOIN orgs o ON o.id = t.org_id
          WHERE ${SHARD_SQL('t.id')} = ANY($1::int[])${since}${from} ORDER BY t.id LIMIT $${params.push(pageSize)}) page`, params);
    if (page!.rows.length) yield page!.rows;
    if (page!.rows.length < pageSize) return;
    after = page!.last;
  }
}

/** Monitors deleted at or after `since` (the delete trigger remembers each for a day). */
export async function deletedSince(db: Executor, since: Date): Promise<string[]> {
  const rows = await db.query<{ target_id: string }>('SELECT target_id FROM deleted_targets WHERE deleted_at >= $1', [since]);
  return rows.map((r) => r.target_id);
}

export interface HandOutDeps {
  plans: PlanService;
  sealer: Sealer;
  catalog: readonly OperatorRegionT[];
  log: Pick<Logger, 'warn'>;
}

/**
 * The row as the scheduler runs it; null when it does not run (paused, held, or a kind neither
 * probed here nor restated). A paused manual monitor thus writes nothing and keeps its state.
 */
export async function toMonitor(row: MonitorRow, deps: HandOutDeps): Promise<Monitor | null> {
  const restated = RESTATED_KINDS.has(row.kind);
  if (!row.runnable || !(restated || PROBED_KINDS.has(row.kind))) return null;
  const monitor = {
    id: row.id, orgId: row.org_id, kind: row.kind, restated,
    spec: openCredentials(row.check_spec, deps.sealer),
    variableRefs: row.variable_refs,
  };
  // No plan in play: a manual interval is fixed, and it has no regions to cap.
  if (restated) return { ...monitor, intervalMs: effectiveIntervalSecs(row.kind, row.interval_secs, null) * 1000, regions: [] };
  let floor: number | null = null;
  let maxRegions: number | null = null;
  try {
    const plan = await deps.plans.forAccount(row.account_id);
    floor = plan.caps.min_check_interval_secs;
    maxRegions = plan.caps.max_regions;
  } catch (err) {
    // Issue 4: if a plan lookup fails, monitors run as stored and a warning is logged.
    deps.log.warn({ err, accountId: row.account_id }, 'plan lookup failed; monitor runs as stored');
  }
  return {
    ...monitor,
    intervalMs: effectiveIntervalSecs(row.kind, row.interval_secs, floor) * 1000,
    regions: regionsAtHandOut(row.regions, deps.catalog, maxRegions),
  };
}
