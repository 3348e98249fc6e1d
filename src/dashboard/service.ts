// The per-org rollup, and its server-side cache (Conventions 10: 5 s, keyed by org).
import type { Executor } from '../db/db.js';
import type { Clock } from '../shared/context.js';
import { CHECK_KINDS, type CheckKind } from '../targets/constants.js';
import { MONITOR_STATES, type DashboardSummaryT, type MonitorState } from './schema.js';

export const DASHBOARD_CACHE_MS = 5_000;

/**
 * One statement over the org's targets, grouped by kind and state; the totals are their sums. A
 * monitor's state is the status of its latest result (one index probe each); a manual monitor
 * never set is `up` (its state from creation), any other monitor without a result `pending`.
 */
export async function computeSummary(db: Executor, orgId: string): Promise<DashboardSummaryT> {
  const rows = await db.query<{ kind: CheckKind; state: MonitorState; total: number; enabled: number; held: number }>(
    `SELECT t.kind, COALESCE(latest.status, CASE WHEN t.kind = 'manual' THEN 'up' ELSE 'pending' END) AS state,
            count(*)::int AS total, count(*) FILTER (WHERE t.enabled)::int AS enabled,
            count(*) FILTER (WHERE t.held_at IS NOT NULL)::int AS held
       FROM targets t
       LEFT JOIN LATERAL (
         SELECT status FROM check_results r WHERE r.target_id = t.id ORDER BY r.checked_at DESC, r.id DESC LIMIT 1
       ) latest ON true
      WHERE t.org_id = $1
      GROUP BY 1, 2`, [orgId]);
  const byKind = Object.fromEntries(CHECK_KINDS.map((k) => [k, 0])) as Record<CheckKind, number>;
  const byState = Object.fromEntries(MONITOR_STATES.map((s) => [s, 0])) as Record<MonitorState, number>;
  let total = 0, enabled = 0, held = 0;
  for (const row of rows) {
    byKind[row.kind] += row.total;
    byState[row.state] += row.total;
    total += row.total;
    enabled += row.enabled;
    held += row.held;
  }
  return { total, enabled, paused: total - enabled, held, by_kind: byKind, by_state: byState };
}

/** Entries beyond this make a set sweep the expired ones, so departed orgs do not pile up. */
const SWEEP_AT = 10_000;

/** Summaries per org id, each served for `ttlMs` from when it was computed, by the injected clock. */
export class SummaryCache {
  private readonly entries = new Map<string, { expiresAt: number; value: DashboardSummaryT }>();

  constructor(private readonly clock: Clock, private readonly ttlMs = DASHBOARD_CACHE_MS) {}

  async get(orgId: string, compute: () => Promise<DashboardSummaryT>): Promise<DashboardSummaryT> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(orgId);
    if (hit && hit.expiresAt > now) return hit.value;
    const value = await compute();
    if (this.entries.size >= SWEEP_AT) {
      for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
    }
    this.entries.set(orgId, { expiresAt: now + this.ttlMs, value });
    return value;
  }
}
